import Crypto
import FoundationEssentials
import KeychainModel

/// What one log entry does.
package enum EntryBody: Hashable, Sendable, WireCodable {
    /// A version of a record: an edit, or a tombstone when the record says it is deleted.
    case record(SealedRecord)
    /// A device joins the roster, with its view key share (the first entry adds its own signer).
    case addDevice(RosterAddition)
    /// A device leaves the roster: nothing it signs after this is accepted.
    case removeDevice(DeviceID)
    /// A new view key epoch, shared with every device on the roster.
    case rotateKeys(KeyRotation)
    /// A device says it is alive at a time (milliseconds since 1970, by its clock) and has seen the
    /// log to this entry: others warn when a device's heartbeats stop coming (withheld entries).
    case heartbeat(UInt64)

    /// Whether this is a record's version (an item entry).
    package var isRecord: Bool { if case .record = self { true } else { false } }

    package func write(to writer: inout ByteWriter) {
        switch self {
        case .record(let record):
            writer.u8(1)
            record.write(to: &writer)
        case .addDevice(let addition):
            writer.u8(2)
            addition.write(to: &writer)
        case .removeDevice(let device):
            writer.u8(3)
            device.write(to: &writer)
        case .rotateKeys(let rotation):
            writer.u8(4)
            rotation.write(to: &writer)
        case .heartbeat(let time):
            writer.u8(5)
            writer.u64(time)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.u8() {
        case 1: self = .record(try SealedRecord(from: &reader))
        case 2: self = .addDevice(try RosterAddition(from: &reader))
        case 3: self = .removeDevice(try DeviceID(from: &reader))
        case 4: self = .rotateKeys(try KeyRotation(from: &reader))
        case 5: self = .heartbeat(try reader.u64())
        default: throw CodecError(.malformed, "an unknown kind of log entry")
        }
    }
}

/// A device added to the roster: its id and public keys, its name sealed under the roster key (the
/// server never sees names), and its share of the current view key.
package struct RosterAddition: Hashable, Sendable, WireCodable {
    package let device: DeviceID
    package let keys: DevicePublicKeys
    let sealedName: [UInt8]
    package let share: KeyShare

    package init(device: DeviceID, keys: DevicePublicKeys, name: String, viewKey: ViewKey, account: AccountID) {
        self.device = device
        self.keys = keys
        // AES-GCM with a fresh nonce does not fail.
        sealedName = Array(try! AES.GCM.seal(SealedRecord.pad(Array(name.utf8)), using: viewKey.rosterKey(account: account),
                                             authenticating: device.bytes).combined!)
        share = KeyShare.seal(viewKey, to: device, keys: keys, account: account)
    }

    /// The device's name, read with the view key of the epoch it was added under.
    package func name(viewKey: ViewKey, account: AccountID) throws(SyncError) -> String {
        do {
            let box = try AES.GCM.SealedBox(combined: sealedName)
            let padded = Array(try AES.GCM.open(box, using: viewKey.rosterKey(account: account), authenticating: device.bytes))
            return String(decoding: try SealedRecord.unpad(padded), as: UTF8.self)
        } catch {
            throw SyncError(.aeadFailure, "the name of device \(device) does not open")
        }
    }

    package func write(to writer: inout ByteWriter) {
        device.write(to: &writer)
        keys.write(to: &writer)
        Data(sealedName).write(to: &writer)
        share.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        device = try DeviceID(from: &reader)
        keys = try DevicePublicKeys(from: &reader)
        sealedName = Array(try Data(from: &reader))
        share = try KeyShare(from: &reader)
        guard sealedName.count <= 4096 else { throw CodecError(.malformed, "a device name too long") }
    }
}

/// A new view key epoch: a share for each device that stays, and the previous view key wrapped
/// under the new one (so holders of the newest key can read records sealed before it).
package struct KeyRotation: Hashable, Sendable, WireCodable {
    package let newEpoch: UInt32
    package let shares: [KeyShare]
    let previousKeyWrapped: [UInt8]

    package init(from previous: ViewKey, to next: ViewKey, recipients: [(DeviceID, DevicePublicKeys)], account: AccountID) {
        newEpoch = next.epoch
        shares = recipients.map { KeyShare.seal(next, to: $0.0, keys: $0.1, account: account) }
        previousKeyWrapped = previous.withBytes { bytes in
            // AES key wrap of a 256-bit key does not fail.
            Array(try! AES.KeyWrap.wrap(SymmetricKey(data: bytes), using: next.key))
        }
    }

    /// The view key of the epoch before `next`.
    package func previousKey(under next: ViewKey) throws(SyncError) -> ViewKey {
        guard next.epoch == newEpoch, newEpoch > 0 else { throw SyncError(.missingKeyShare, "not this rotation's key") }
        do {
            let key = try AES.KeyWrap.unwrap(previousKeyWrapped, using: next.key)
            return try ViewKey(epoch: newEpoch - 1, bytes: key.withUnsafeBytes { Array($0) })
        } catch {
            throw SyncError(.aeadFailure, "the previous view key does not unwrap")
        }
    }

    package func write(to writer: inout ByteWriter) {
        writer.u32(newEpoch)
        writer.u32(UInt32(shares.count))
        for share in shares { share.write(to: &writer) }
        Data(previousKeyWrapped).write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        newEpoch = try reader.u32()
        let count = Int(try reader.u32())
        guard count <= 4096 else { throw CodecError(.malformed, "too many key shares") }
        var shares: [KeyShare] = []
        for _ in 0..<count { shares.append(try KeyShare(from: &reader)) }
        self.shares = shares
        previousKeyWrapped = Array(try Data(from: &reader))
        guard previousKeyWrapped.count == 40 else { throw CodecError(.malformed, "a wrapped view key of the wrong size") }
    }
}
