import Crypto
import FoundationEssentials
import KeychainModel

/// The kinds of identifier sync uses (phantom types of ``SyncIdentifier``).
package enum AccountKind {}
package enum DeviceKind {}
package enum RecordKind {}

/// A random 128-bit identifier: an account, a device or a record. Random, so it tells the server
/// nothing (no counter, no time, no name).
package struct SyncIdentifier<Kind>: Hashable, Sendable, Comparable, CustomStringConvertible, WireCodable {
    package static var byteCount: Int { 16 }
    package let bytes: [UInt8]

    /// A new random identifier.
    package init() {
        var generator = SystemRandomNumberGenerator()
        bytes = (0..<Self.byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// From 32 lowercase or uppercase hexadecimal digits (how ids appear in URLs and JSON).
    package init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == Self.byteCount * 2 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// Lowercase hexadecimal.
    package var hex: String { String(decoding: bytes.flatMap { [Self.digit($0 >> 4), Self.digit($0 & 0xF)] }, as: UTF8.self) }
    package var description: String { hex }

    /// Byte order: the lower record id wins when two devices create the same item (SYNC.md).
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    package func write(to writer: inout ByteWriter) { writer.raw(bytes) }
    package init(from reader: inout ByteReader) throws(StoreError) { bytes = Array(try reader.take(Self.byteCount)) }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func digit(_ n: UInt8) -> UInt8 { n < 10 ? UInt8(ascii: "0") + n : UInt8(ascii: "a") + n - 10 }
}

package typealias AccountID = SyncIdentifier<AccountKind>
package typealias DeviceID = SyncIdentifier<DeviceKind>
package typealias RecordID = SyncIdentifier<RecordKind>
