import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// What one device keeps of its sync account, in its own keychain (``DeviceStateStore``): its
/// identity and private keys, the view keys it holds, the head it verified last (pinned), its
/// clocks, and for each synced item the record it is and the digest of what was last exchanged.
/// Never printed: its description names the account and the device only.
package struct DeviceState: Sendable, WireCodable, CustomStringConvertible {
    static let format: UInt8 = 1

    package var server: String
    package var account: AccountID
    package var device: DeviceID
    package var name: String
    // Private keys in swift-crypto's zeroing storage (SecureBytes): a copy of the state in memory
    // shares them, and they are zeroed when the last one goes.
    var signingKey: SymmetricKey
    var agreementKey: SymmetricKey
    /// View keys by epoch (32 bytes each).
    var viewKeys: [UInt32: SymmetricKey]
    /// The head this device verified last: never moves back.
    package var pinned: LogHead
    /// The hybrid clock's last reading and this device's last log counter.
    var clock: UInt64
    var counter: UInt64
    /// Synced items by primary key.
    var synced: [[UInt8]: SyncedItem]
    /// Set when the log says this device was removed.
    package var isRemoved: Bool
    /// Set while the server refuses this device (as it does a removed one); cleared when it
    /// serves it again. The server's word alone never stops syncing for good.
    package var isRefusedByServer = false

    package var description: String { "DeviceState(account \(account), device \(device))" }

    init(server: String, account: AccountID, identity: DeviceIdentity, name: String, viewKey: ViewKey?) {
        (self.server, self.account, device, self.name) = (server, account, identity.id, name)
        (signingKey, agreementKey) = identity.withPrivateKeys { (SymmetricKey(data: $0), SymmetricKey(data: $1)) }
        viewKeys = [:]
        if let viewKey { viewKeys[viewKey.epoch] = viewKey.withBytes { SymmetricKey(data: $0) } }
        (pinned, clock, counter, synced, isRemoved) = (.empty, 0, 0, [:], false)
    }

    /// The device's identity, from its stored keys.
    package func identity() throws(SyncEngineError) -> DeviceIdentity {
        var (signing, agreement) = (Self.bytes(signingKey), Self.bytes(agreementKey))
        defer {
            zeroize(&signing)
            zeroize(&agreement)
        }
        do {
            return try DeviceIdentity(id: device, signingKey: signing, agreementKey: agreement)
        } catch {
            throw SyncEngineError(.keychain, "this device's stored sync keys are damaged")
        }
    }

    func viewKey(epoch: UInt32) -> ViewKey? {
        guard let key = viewKeys[epoch] else { return nil }
        var bytes = Self.bytes(key)
        defer { zeroize(&bytes) }
        return try? ViewKey(epoch: epoch, bytes: bytes)
    }

    /// Every view key this device holds, oldest epoch first (what a removed device keeps: the tests
    /// show that none of them opens what is written after its removal).
    package var heldViewKeys: [ViewKey] { viewKeys.keys.sorted().compactMap(viewKey(epoch:)) }

    /// Keeps a view key this device received.
    mutating func keep(_ viewKey: ViewKey) {
        viewKeys[viewKey.epoch] = viewKey.withBytes { SymmetricKey(data: $0) }
    }

    static func bytes(_ key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    package func write(to writer: inout ByteWriter) {
        writer.u8(Self.format)
        server.write(to: &writer)
        account.write(to: &writer)
        device.write(to: &writer)
        name.write(to: &writer)
        signingKey.withUnsafeBytes { writer.raw($0) }
        agreementKey.withUnsafeBytes { writer.raw($0) }
        writer.u32(UInt32(viewKeys.count))
        for (epoch, key) in viewKeys.sorted(by: { $0.key < $1.key }) {
            writer.u32(epoch)
            key.withUnsafeBytes { writer.raw($0) }
        }
        pinned.write(to: &writer)
        writer.u64(clock)
        writer.u64(counter)
        writer.u32(UInt32(synced.count))
        for (_, item) in synced.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { item.write(to: &writer) }
        isRemoved.write(to: &writer)
        isRefusedByServer.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        guard try reader.u8() == Self.format else { throw CodecError(.malformed, "a sync state of another format") }
        server = try String(from: &reader)
        account = try AccountID(from: &reader)
        device = try DeviceID(from: &reader)
        name = try String(from: &reader)
        signingKey = SymmetricKey(data: try reader.take(32))
        agreementKey = SymmetricKey(data: try reader.take(32))
        let keyCount = Int(try reader.u32())
        guard keyCount <= reader.remaining / 36 else { throw CodecError(.malformed, "a sync state that is truncated") }
        viewKeys = [:]
        for _ in 0..<keyCount {
            let epoch = try reader.u32()
            viewKeys[epoch] = SymmetricKey(data: try reader.take(32))
        }
        pinned = try LogHead(from: &reader)
        clock = try reader.u64()
        counter = try reader.u64()
        let itemCount = Int(try reader.u32())
        guard itemCount <= reader.remaining / 16 else { throw CodecError(.malformed, "a sync state that is truncated") }
        synced = [:]
        for _ in 0..<itemCount {
            let item = try SyncedItem(from: &reader)
            synced[item.primaryKey] = item
        }
        isRemoved = try Bool(from: &reader)
        isRefusedByServer = try Bool(from: &reader)
    }
}

/// One synced item: its primary key (the item class and its primary-key attributes), the record
/// it is in the log, and the digest of the content last exchanged (to notice local edits).
struct SyncedItem: Sendable, Hashable, WireCodable {
    var primaryKey: [UInt8]
    var record: RecordID
    var digest: [UInt8]

    func write(to writer: inout ByteWriter) {
        Data(primaryKey).write(to: &writer)
        record.write(to: &writer)
        writer.raw(digest)
    }

    init(primaryKey: [UInt8], record: RecordID, digest: [UInt8]) {
        (self.primaryKey, self.record, self.digest) = (primaryKey, record, digest)
    }

    init(from reader: inout ByteReader) throws(CodecError) {
        primaryKey = Array(try Data(from: &reader))
        record = try RecordID(from: &reader)
        digest = Array(try reader.take(32))
    }
}
