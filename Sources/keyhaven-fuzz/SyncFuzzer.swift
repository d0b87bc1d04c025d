import Foundation
import KeyhavenSyncProtocol

/// The `sync` target: bytes as what a hostile server can send a device: a log entry (decoded,
/// then verified after a fixed honest log), a sealed record and a key share (decoded, then
/// opened with fixed keys). Every path returns: a refusal, never a crash.
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
    }
}
