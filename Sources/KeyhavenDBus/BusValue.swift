import KeychainModel

/// One D-Bus value, with its type: what ``BusMessage`` reads from and appends to sd-bus
/// messages, so the Secret Service's methods work on Swift values.
package indirect enum BusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `ay`, read and written in one piece.
    case bytes([UInt8])
    /// An array of `element`-typed values (not `ay`, not a dictionary).
    case array(element: String, [BusValue])
    /// `a{KV}`, in order.
    case dictionary(key: String, value: String, [Pair])
    case structure([BusValue])
    case variant(BusValue)
    /// `h`: a file descriptor passed with the message.
    case fileDescriptor(BusFileDescriptor)

    package struct Pair: Sendable, Equatable {
        package let key: BusValue
        package let value: BusValue
        package init(_ key: BusValue, _ value: BusValue) { self.key = key; self.value = value }
    }

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{\(key)\(value)}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        case .fileDescriptor: "h"
        }
    }

    // MARK: - Building

    /// `a{ss}`.
    package static func stringDictionary(_ pairs: [String: String]) -> BusValue {
        .dictionary(key: "s", value: "s", pairs.sorted { $0.key < $1.key }.map { Pair(.string($0.key), .string($0.value)) })
    }

    /// `a{sv}`.
    package static func properties(_ pairs: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", pairs.map { Pair(.string($0.0), .variant($0.1)) })
    }

    /// `ao`.
    package static func paths(_ paths: [String]) -> BusValue { .array(element: "o", paths.map(BusValue.objectPath)) }

    // MARK: - Reading

    package var stringValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    package var boolValue: Bool? {
        switch self {
        case .bool(let b): b
        case .variant(let inner): inner.boolValue
        default: nil
        }
    }

    /// An unsigned integer of any width (`y`, `u`, `t`).
    package var unsignedValue: UInt64? {
        switch self {
        case .byte(let b): UInt64(b)
        case .uint32(let u): UInt64(u)
        case .uint64(let t): t
        case .variant(let inner): inner.unsignedValue
        default: nil
        }
    }

    package var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let b): b
        case .variant(let inner): inner.bytesValue
        default: nil
        }
    }

    /// The paths of an `ao`.
    package var pathsValue: [String]? {
        switch self {
        case .array("o", let items): items.compactMap { if case .objectPath(let p) = $0 { p } else { nil } }
        case .variant(let inner): inner.pathsValue
        default: nil
        }
    }

    /// An `a{ss}` as a dictionary (the last of a repeated key wins), nil for any other type.
    /// The attributes of a search (`a{ss}`), within the limits an item's lookup attributes have
    /// (``SecretServiceAttributes``): more pairs, or a longer name or value, is LimitsExceeded
    /// (no item could carry them), before any keychain is searched.
    package func searchAttributes() throws(BusError) -> [String: String] {
        if case .dictionary("s", "s", let pairs) = self, pairs.count > SecretServiceAttributes.maximumCount {
            throw .limitsExceeded("a search takes at most \(SecretServiceAttributes.maximumCount) attributes, not \(pairs.count)")
        }
        let attributes = stringDictionaryValue ?? [:]
        for (name, value) in attributes where name.utf8.count > SecretServiceAttributes.maximumLength
            || value.utf8.count > SecretServiceAttributes.maximumLength {
            throw .limitsExceeded("a search attribute's name or value is longer than \(SecretServiceAttributes.maximumLength) bytes")
        }
        return attributes
    }

    package var stringDictionaryValue: [String: String]? {
        switch self {
        case .dictionary("s", "s", let pairs):
            var result: [String: String] = [:]
            for pair in pairs {
                guard case .string(let key) = pair.key, case .string(let value) = pair.value else { return nil }
                result[key] = value
            }
            return result
        case .variant(let inner): return inner.stringDictionaryValue
        default: return nil
        }
    }

    /// An `a{sv}` as a dictionary of the variants' contents.
    package var propertiesValue: [String: BusValue]? {
        switch self {
        case .dictionary("s", "v", let pairs):
            var result: [String: BusValue] = [:]
            for pair in pairs {
                guard case .string(let key) = pair.key, case .variant(let value) = pair.value else { return nil }
                result[key] = value
            }
            return result
        default: return nil
        }
    }
}
