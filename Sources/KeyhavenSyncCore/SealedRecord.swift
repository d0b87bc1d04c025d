import Crypto
import FoundationEssentials
import KeychainModel

/// One version of one synced item, as the server keeps it: a random record id, the class, the
/// version (a hybrid logical clock), the delete flag, the item key wrapped under the class key, and
/// the padded payload (every syncable attribute and the secret) sealed with AES-256-GCM under the
/// item key. The associated data binds the account, the record, the epoch, the class, the version
/// and the delete flag, so a ciphertext cannot be moved to another record, account, epoch or
/// version, nor a tombstone turned into an edit.
package struct SealedRecord: Hashable, Sendable, WireCodable {
    package let record: RecordID
    package let syncClass: SyncClass
    package let version: UInt64
    package let isDeleted: Bool
    let wrappedItemKey: [UInt8]
    let ciphertext: [UInt8]

    /// The payload sizes the server sees: multiples of 64 bytes, at least 128.
    static let bucket = 64, minimumPadded = 128

    /// Seals `payload` under a fresh item key, wrapped under `viewKey`'s class key.
    package static func seal(_ payload: [UInt8], record: RecordID, syncClass: SyncClass, version: UInt64, isDeleted: Bool,
                             viewKey: ViewKey, account: AccountID) -> SealedRecord {
        let itemKey = SymmetricKey(size: .bits256)
        var padded = pad(payload)
        defer { zeroize(&padded) }
        let associated = associatedData(account: account, record: record, epoch: viewKey.epoch, syncClass: syncClass, version: version,
                                        isDeleted: isDeleted)
        // AES-GCM with a fresh random nonce and AES key wrap of a 256-bit key do not fail.
        let box = try! AES.GCM.seal(padded, using: itemKey, authenticating: associated)
        let wrapped = try! AES.KeyWrap.wrap(itemKey, using: viewKey.classKey(syncClass, account: account))
        return SealedRecord(record: record, syncClass: syncClass, version: version, isDeleted: isDeleted,
                            wrappedItemKey: Array(wrapped), ciphertext: Array(box.combined!))
    }

    init(record: RecordID, syncClass: SyncClass, version: UInt64, isDeleted: Bool, wrappedItemKey: [UInt8], ciphertext: [UInt8]) {
        (self.record, self.syncClass, self.version, self.isDeleted) = (record, syncClass, version, isDeleted)
        (self.wrappedItemKey, self.ciphertext) = (wrappedItemKey, ciphertext)
    }

    /// The payload, opened with the view key of the epoch it was sealed under; the caller zeroes it.
    package func open(viewKey: ViewKey, account: AccountID) throws(SyncError) -> [UInt8] {
        do {
            let itemKey = try AES.KeyWrap.unwrap(wrappedItemKey, using: viewKey.classKey(syncClass, account: account))
            let associated = Self.associatedData(account: account, record: record, epoch: viewKey.epoch, syncClass: syncClass,
                                                 version: version, isDeleted: isDeleted)
            var padded = Array(try AES.GCM.open(try AES.GCM.SealedBox(combined: ciphertext), using: itemKey, authenticating: associated))
            defer { zeroize(&padded) }
            return try Self.unpad(padded)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.aeadFailure, "record \(record) does not open under epoch \(viewKey.epoch)")
        }
    }

    static func associatedData(account: AccountID, record: RecordID, epoch: UInt32, syncClass: SyncClass, version: UInt64,
                               isDeleted: Bool) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw("keyhaven sync record v1".utf8)
        account.write(to: &writer)
        record.write(to: &writer)
        writer.u32(epoch)
        writer.u8(syncClass.rawValue)
        writer.u64(version)
        writer.u8(isDeleted ? 1 : 0)
        return writer.bytes
    }

    /// ISO/IEC 7816-4 padding (0x80, then zeros) to the bucket size.
    static func pad(_ payload: [UInt8]) -> [UInt8] {
        let length = max(minimumPadded, (payload.count + 1 + bucket - 1) / bucket * bucket)
        return payload + [0x80] + [UInt8](repeating: 0, count: length - payload.count - 1)
    }

    static func unpad(_ padded: [UInt8]) throws(SyncError) -> [UInt8] {
        guard let marker = padded.lastIndex(where: { $0 != 0 }), padded[marker] == 0x80 else {
            throw SyncError(.malformed, "a record's padding is damaged")
        }
        return Array(padded[..<marker])
    }

    package func write(to writer: inout ByteWriter) {
        record.write(to: &writer)
        writer.u8(syncClass.rawValue)
        writer.u64(version)
        writer.u8(isDeleted ? 1 : 0)
        Data(wrappedItemKey).write(to: &writer)
        Data(ciphertext).write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        record = try RecordID(from: &reader)
        guard let syncClass = SyncClass(rawValue: try reader.u8()) else { throw CodecError(.malformed, "an unknown sync class") }
        self.syncClass = syncClass
        version = try reader.u64()
        isDeleted = try Bool(from: &reader)
        wrappedItemKey = Array(try Data(from: &reader))
        ciphertext = Array(try Data(from: &reader))
        guard wrappedItemKey.count == 40, ciphertext.count >= 12 + 16 + Self.minimumPadded, (ciphertext.count - 28) % Self.bucket == 0 else {
            throw CodecError(.malformed, "a sealed record of the wrong size")
        }
    }
}
