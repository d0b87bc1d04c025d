import Foundation
import KeychainStore

/// A value from a caller's dictionary, sorted by what it really is.
///
/// On Linux a dictionary built as `[String: Any]` keeps Swift values (`Bool`, `String`, `Data`),
/// while one built from Core Foundation names holds `NSNumber`, `NSString`, `NSData`; both land
/// here the same way. Booleans are told apart from numbers so that return keys can insist on a
/// boolean, as Apple does.
enum IncomingValue {
    case string(String)
    case data(Data)
    case number(Int64, isBoolean: Bool)
    case date(Date)
    case uuid(UUID)
    case null
    case accessControl(SecAccessControl)
    case access(SecAccess)
    case keychain(SecKeychain)
    case array([Any])
    case unsupported

    init(_ value: Any) {
        switch value {
        case let b as Bool where type(of: value) == Bool.self: self = .number(b ? 1 : 0, isBoolean: true)
        case let s as String: self = .string(s)
        case let d as Data: self = .data(d)
        case let d as Date: self = .date(d)
        case let u as UUID: self = .uuid(u)
        case let n as NSNumber:
            let isBoolean = String(cString: n.objCType) == "c"
            let double = n.doubleValue
            guard double.rounded() == double, abs(double) < 9.2e18 else { self = .unsupported; return }
            self = .number(n.int64Value, isBoolean: isBoolean)
        case is NSNull: self = .null
        case let a as SecAccessControl: self = .accessControl(a)
        case let a as SecAccess: self = .access(a)
        case let k as SecKeychain: self = .keychain(k)
        case let a as [Any]: self = .array(a)
        default: self = .unsupported
        }
    }

    /// The value as a strict boolean (Swift `Bool` or `kCFBooleanTrue`/`False`).
    var strictBoolean: Bool? {
        if case .number(let n, true) = self { return n != 0 }
        return nil
    }

    /// The value as a boolean, also from the numbers 0 and 1.
    var looseBoolean: Bool? {
        if case .number(let n, _) = self, n == 0 || n == 1 { return n == 1 }
        return nil
    }

    /// Converts to an attribute of `kind` (`SecDbItem.c`'s value conversions); nil when Apple would refuse it (errSecParam).
    func attributeValue(for kind: AttributeKind) -> AttributeValue? {
        switch (kind, self) {
        case (.blob, .string(let s)), (.string, .string(let s)): return .string(s)
        case (.blob, .data(let d)), (.data, .data(let d)): return .data(d)
        case (.blob, .number(let n, _)): return .number(n)
        case (.data, .string(let s)): return .data(Data(s.utf8))
        case (.data, .number(let n, _)): return .data(Data(AttributeValue.number(n).comparableBytes))
        case (.string, .data(let d)): return String(data: d, encoding: .utf8).map(AttributeValue.string)
        case (.string, .uuid(let u)): return .string(u.uuidString)
        case (.number, .number(let n, _)): return .number(n)
        case (.number, .string(let s)): return Int64(s).map(AttributeValue.number) ?? .string(s)
        case (.date, .date(let d)): return .date(d)
        default: return nil
        }
    }
}
