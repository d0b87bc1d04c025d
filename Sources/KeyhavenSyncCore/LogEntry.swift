import Crypto
import FoundationEssentials
import KeychainModel

/// A position in the log: a sequence number and the hash of the entry there (zero and 32 zero
/// bytes before the first entry).
package struct LogHead: Hashable, Sendable, WireCodable, CustomStringConvertible {
    package let sequence: UInt64
    package let hash: [UInt8]

    package static let empty = LogHead(sequence: 0, hash: [UInt8](repeating: 0, count: 32))

    package init(sequence: UInt64, hash: [UInt8]) {
        self.sequence = sequence
        self.hash = hash
    }

    /// A short fingerprint of the head, for people to compare between devices (`sync verify`).
    package var fingerprint: String {
        let hex = hash.prefix(10).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return "\(sequence)-" + stride(from: 0, to: hex.count, by: 4).map { offset -> String in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<hex.index(start, offsetBy: 4)])
        }.joined(separator: "-")
    }

    package var description: String { fingerprint }

    package func write(to writer: inout ByteWriter) {
        writer.u64(sequence)
        writer.raw(hash)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        sequence = try reader.u64()
        hash = Array(try reader.take(32))
    }
}

/// One entry of an account's log, signed by the device that wrote it. The device fills in the
/// sequence number and the previous entry's hash before it signs, so the server can neither
/// reorder entries nor move one to another place; a per-device counter that strictly increases
/// makes a replayed entry detectable. The entry's hash is SHA-256(previous hash || its encoding).
package struct LogEntry: Hashable, Sendable, WireCodable {
    /// The format this code writes; a log never goes back to an older one. Format 2: heartbeats
    /// carry their time, and a device's removal is followed at once by the rotation of the keys.
    /// Format 1 entries (the same layout, from before those rules) are read, but never after a
    /// format 2 entry: a server cannot pass an entry off as following the older rules.
    package static let currentFormat: UInt8 = 2
    /// The largest entry a server takes or a device reads (a record's payload is a 16 MiB secret
    /// at most, as in the keychain, with its attributes).
    package static let maximumSize = 17 << 20

    package let format: UInt8
    package let account: AccountID
    package let sequence: UInt64
    package let previousHash: [UInt8]
    package let device: DeviceID
    package let deviceCounter: UInt64
    package let keyEpoch: UInt32
    package let body: EntryBody
    package private(set) var signature: [UInt8]

    /// A new entry at `position` (the head it follows), signed by `identity`.
    package init(_ body: EntryBody, account: AccountID, after position: LogHead, counter: UInt64, epoch: UInt32,
                 signedBy identity: DeviceIdentity) {
        (format, self.account, sequence, previousHash) = (Self.currentFormat, account, position.sequence + 1, position.hash)
        (device, deviceCounter, keyEpoch, self.body) = (identity.id, counter, epoch, body)
        signature = []
        signature = identity.sign(signedBytes)
    }

    /// The bytes the signature covers: a domain label and every field but the signature.
    var signedBytes: [UInt8] {
        var writer = ByteWriter()
        writer.raw("keyhaven sync entry v1".utf8)
        writeFields(to: &writer)
        return writer.bytes
    }

    /// This entry's hash, which the next entry names.
    package var hash: [UInt8] { Array(SHA256.hash(data: previousHash + wireBytes)) }

    /// The head this entry makes.
    package var head: LogHead { LogHead(sequence: sequence, hash: hash) }

    /// Whether the signature is `keys`'.
    package func isSigned(by keys: DevicePublicKeys) -> Bool {
        keys.signingKey.isValidSignature(signature, for: signedBytes)
    }

    private func writeFields(to writer: inout ByteWriter) {
        writer.u8(format)
        account.write(to: &writer)
        writer.u64(sequence)
        writer.raw(previousHash)
        device.write(to: &writer)
        writer.u64(deviceCounter)
        writer.u32(keyEpoch)
        body.write(to: &writer)
    }

    package func write(to writer: inout ByteWriter) {
        writeFields(to: &writer)
        writer.raw(signature)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        format = try reader.u8()
        guard format >= 1 else { throw CodecError(.malformed, "an entry of no known format") }
        account = try AccountID(from: &reader)
        sequence = try reader.u64()
        previousHash = Array(try reader.take(32))
        device = try DeviceID(from: &reader)
        deviceCounter = try reader.u64()
        keyEpoch = try reader.u32()
        body = try EntryBody(from: &reader)
        signature = Array(try reader.take(64))
    }

    /// An entry from its encoding, which must be all of `bytes`.
    package static func decode(_ bytes: [UInt8]) throws(SyncError) -> LogEntry {
        guard bytes.count <= maximumSize else { throw SyncError(.malformed, "an entry larger than \(maximumSize) bytes") }
        do {
            return try LogEntry(wireBytes: bytes)
        } catch {
            throw SyncError(.malformed, "an entry does not decode: \(error.message)")
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
