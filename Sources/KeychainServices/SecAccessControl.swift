import Foundation
import KeychainModel

/// Options for `SecAccessControlCreateWithFlags`, with Apple's bit values.
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    @available(*, deprecated, renamed: "companion")
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// The flags that are constraints (need authentication), as opposed to modifiers.
    static let constraints: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion]
}

/// An item's access control: its accessibility class plus authentication constraints.
///
/// The object is stored with the item and returned as `kSecAttrAccessControl`. Constraints are
/// recorded; enforcing them (asking the user) comes with the agent.
public final class SecAccessControl: Hashable, Sendable, CustomStringConvertible {
    /// The accessibility class (`kSecAttrAccessible...` value).
    let protection: String
    let flags: SecAccessControlCreateFlags

    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    /// Whether the access control requires authentication (and so may not be synchronizable).
    var hasConstraints: Bool { !flags.intersection(.constraints).isEmpty }

    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.protection == rhs.protection && lhs.flags == rhs.flags
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(protection)
        hasher.combine(flags.rawValue)
    }
    public var description: String { "<SecAccessControl protection: \(protection), flags: 0x\(String(flags.rawValue, radix: 16))>" }
}

public typealias SecAccessControlRef = SecAccessControl

/// Creates an access control from an accessibility class and flags.
///
/// Fails (nil, with an `NSOSStatusErrorDomain` error of `errSecParam`) for a protection that is
/// not an accessibility class, `.or` with `.and`, `.biometryAny` with `.biometryCurrentSet`, or
/// `.userPresence` with another constraint, as Apple's validation does.
@discardableResult
public func SecAccessControlCreateWithFlags(_ allocator: CFAllocator?, _ protection: CFTypeRef,
                                            _ flags: SecAccessControlCreateFlags,
                                            _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl? {
    func fail(_ reason: String) -> SecAccessControl? {
        let nsError = NSError(domain: "NSOSStatusErrorDomain", code: Int(errSecParam),
                              userInfo: [NSLocalizedDescriptionKey: reason])
        error?.pointee = Unmanaged.passRetained(nsError)
        return nil
    }
    guard let name = protection as? String, accessibilityClasses.contains(name) else {
        return fail("protection is not a kSecAttrAccessible value")
    }
    if flags.contains(.or) && flags.contains(.and) { return fail("kSecAccessControlOr and kSecAccessControlAnd together") }
    if flags.contains(.biometryAny) && flags.contains(.biometryCurrentSet) {
        return fail("kSecAccessControlBiometryAny and kSecAccessControlBiometryCurrentSet together")
    }
    if flags.contains(.userPresence), !flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).isEmpty {
        return fail("kSecAccessControlUserPresence combined with another constraint")
    }
    return SecAccessControl(protection: name, flags: flags)
}

/// The wire values `kSecAttrAccessible` accepts.
let accessibilityClasses = Set(KeyClass.allCases.map(\.rawValue))
