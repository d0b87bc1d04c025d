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
        guard let bytes = Hex.decode(hex), bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Lowercase hexadecimal.
    package var hex: String { Hex.encode(bytes) }
    package var description: String { hex }

    /// Byte order: the lower record id wins when two devices create the same item (SYNC.md).
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    package func write(to writer: inout ByteWriter) { writer.raw(bytes) }
    package init(from reader: inout ByteReader) throws(CodecError) { bytes = Array(try reader.take(Self.byteCount)) }
}

package typealias AccountID = SyncIdentifier<AccountKind>
package typealias DeviceID = SyncIdentifier<DeviceKind>
package typealias RecordID = SyncIdentifier<RecordKind>
