import FoundationEssentials
import KeychainModel
import KeyhavenSyncProtocol

/// A device on the account, as the verified log says.
package struct SyncDeviceInfo: Sendable, Hashable {
    package let id: DeviceID
    package let name: String
    package let addedBy: DeviceID
    /// The position in the log of its addition and of its last entry (no clock: the log's order).
    package let addedAt: UInt64
    package let lastSeen: UInt64
    package let isActive: Bool
    package let isThisDevice: Bool
    package let isRecoveryKey: Bool
}

/// What `sync status` shows.
package struct SyncStatusInfo: Sendable, Hashable {
    package let server: String
    package let account: AccountID
    package let device: DeviceID
    package let name: String
    package let head: LogHead
    package let items: Int
    package let isRemoved: Bool
}

extension SyncEngine {
    /// This home's sync status, from what it verified last (no network).
    package func status() throws(SyncEngineError) -> SyncStatusInfo? {
        guard let state = try states.load() else { return nil }
        return SyncStatusInfo(server: state.server, account: state.account, device: state.device, name: state.name, head: state.pinned,
                              items: state.synced.count, isRemoved: state.isRemoved || state.isRefusedByServer)
    }

    /// The account's devices, from the verified log kept here (`sync now` brings it up to date).
    package func devices() throws(SyncEngineError) -> [SyncDeviceInfo] {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        // The verified log is enough: no record is opened to list the devices.
        let loaded = LogCache(home: home, account: state.account).load(pinned: state.pinned)
        var lastSeen: [DeviceID: UInt64] = [:]
        var names: [DeviceID: (name: String, at: UInt64)] = [:]
        for entry in loaded.entries {
            lastSeen[entry.device] = entry.sequence
            if case .addDevice(let addition) = entry.body {
                let name = state.viewKey(epoch: entry.keyEpoch).flatMap { try? addition.name(viewKey: $0, account: state.account) } ?? "?"
                names[addition.device] = (name, entry.sequence)
            }
        }
        return loaded.log.roster.sorted { ($0.value.addedAt, $0.key) < ($1.value.addedAt, $1.key) }.map { id, member in
            let name = names[id]?.name ?? "?", isRecoveryKey = name == RecoveryKey.rosterName
            return SyncDeviceInfo(id: id, name: isRecoveryKey ? "recovery key" : name, addedBy: member.addedBy, addedAt: member.addedAt,
                                  lastSeen: lastSeen[id] ?? member.addedAt, isActive: member.isActive, isThisDevice: id == state.device,
                                  isRecoveryKey: isRecoveryKey)
        }
    }
}
