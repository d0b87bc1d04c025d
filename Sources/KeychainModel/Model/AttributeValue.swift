import FoundationEssentials

/// A typed attribute value. The engine keeps the type a caller supplied (a Blob attribute given
/// as a string comes back as a string, given as data comes back as data), as Apple does.
package enum AttributeValue: Sendable, Hashable {
    case string(String)
    case data(Data)
    case number(Int64)
    case date(Date)

    /// The byte form that Apple's hashed ("S") attributes compare: strings as UTF-8, data as is,
    /// numbers as a 4-byte little-endian Int32 (Apple uses native endianness). Dates by their
    /// absolute time's bit pattern.
    package var comparableBytes: [UInt8] {
        switch self {
        case .string(let s): return Array(s.utf8)
        case .data(let d): return Array(d)
        case .number(let n):
            let v = UInt32(truncatingIfNeeded: n)
            return [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
        case .date(let d):
            let bits = d.timeIntervalSinceReferenceDate.bitPattern
            return (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
        }
    }

    /// The canonical key under which two values are equal for matching and uniqueness.
    ///
    /// Blob/Data/String attributes compare by bytes (a string and data with the same UTF-8 bytes
    /// are equal, as Apple's SHA-1 columns make them). Numbers compare by value, and a number
    /// attribute holding a non-numeric string (Apple keeps `kSecAttrProtocol` "http" as a string)
    /// compares by its text.
    package func matchKey(for kind: AttributeKind) -> [UInt8] {
        switch kind {
        case .blob, .data, .string:
            return [0x62] + comparableBytes
        case .number:
            switch self {
            case .number(let n): return [0x6E] + Array(String(n).utf8)
            case .string(let s): return [0x73] + Array(s.utf8)
            default: return [0x62] + comparableBytes
            }
        case .date:
            return [0x64] + comparableBytes
        }
    }

    /// Whether the two values are equal for matching: `matchKey(for:)` of both compared, without
    /// building the keys for the common pairs (a look-up re-checks every criterion on every row).
    package func matches(_ other: AttributeValue, as kind: AttributeKind) -> Bool {
        switch (kind, self, other) {
        case (.blob, .string(let a), .string(let b)), (.data, .string(let a), .string(let b)), (.string, .string(let a), .string(let b)):
            return a.hasSameUTF8(as: b)
        case (.blob, .data(let a), .data(let b)), (.data, .data(let a), .data(let b)), (.string, .data(let a), .data(let b)):
            return a == b
        case (.number, .number(let a), .number(let b)):
            return a == b
        default:
            return matchKey(for: kind) == other.matchKey(for: kind)
        }
    }
}
