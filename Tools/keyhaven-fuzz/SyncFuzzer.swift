import Foundation
import KeyhavenSyncCore

/// The `sync` target: bytes as what a hostile server can send a device: a log entry (decoded,
/// then verified after a fixed honest log), a sealed record and a key share (decoded, then
/// opened with fixed keys), a pull's answer (`LogBatch`), relayed pairing messages; and as what a
/// hostile client can send the server: a request signature's headers. Every path returns: a
/// refusal, never a crash.
enum SyncFuzzer {
    /// A fixed account whose first entry the fuzzed one follows.
    static let fixture: (state: LogState, viewKey: ViewKey, account: AccountID, device: DeviceIdentity) = {
        let account = AccountID(), device = DeviceIdentity(), viewKey = ViewKey(epoch: 1)
        let genesis = LogEntry(.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: "fuzz", viewKey: viewKey,
                                                         account: account)),
                               account: account, after: .empty, counter: 1, epoch: 1, signedBy: device)
        let state = try! LogState(account: account).verifying([genesis], serverHead: genesis.head)
        return (state, viewKey, account, device)
    }()

    static func run(_ bytes: [UInt8]) {
        let fixture = fixture
        if let entry = try? LogEntry.decode(bytes) {
            _ = try? fixture.state.verifying([entry], serverHead: entry.head)
            _ = try? LogState(account: entry.account).verifying([entry], serverHead: entry.head)
            _ = entry.head.fingerprint
        }
        if let record = try? SealedRecord(wireBytes: bytes) { _ = try? record.open(viewKey: fixture.viewKey, account: fixture.account) }
        if let share = try? KeyShare(wireBytes: bytes) { _ = try? share.open(with: fixture.device, account: fixture.account) }
        if let rotation = try? KeyRotation(wireBytes: bytes) { _ = try? rotation.previousKey(under: fixture.viewKey) }
        if let batch = try? LogBatch(wireBytes: bytes) { _ = try? fixture.state.verifying(batch.entries, serverHead: batch.head) }
        if let relayed = try? RelayMessages(wireBytes: bytes) { _ = relayed.messages.count }
        if let head = try? LogHead(wireBytes: bytes) { _ = head.fingerprint }
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(separator: "\n", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        if fields.count >= 3, let signature = RequestSignature(device: fields[0], date: fields[1], signature: fields[2]) {
            _ = signature.isValid(method: "GET", target: fields.count > 3 ? fields[3] : "/", body: [], keys: fixture.device.publicKeys)
        }
    }
}
