import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// A device on the account, as the verified log says.
package struct SyncDeviceInfo: Sendable, Hashable {
    package let id: DeviceID
    package let name: String
    package let addedBy: DeviceID
    /// The position in the log of its addition and of its last entry (no clock: the log's order).
    package let addedAt: UInt64
    package let lastSeen: UInt64
    /// The time of its last heartbeat (milliseconds since 1970, by its clock), if it sent one.
    package let lastHeartbeat: UInt64?
    package let isActive: Bool
    package let isThisDevice: Bool
    package let isRecoveryKey: Bool
}

/// What `sync status` shows.
package struct SyncStatusInfo: Sendable {
    package let server: String
    package let account: AccountID
    package let device: DeviceID
    package let name: String
    package let head: LogHead
    package let items: Int
    package let isRemoved: Bool
    /// The refusal the last round ended in (its name, as "fork detected", and message), if it did.
    package let refusal: (name: String, message: String)?
    /// Active devices whose last heartbeat is older than the limit asked for (withheld entries?).
    package let staleDevices: [SyncDeviceInfo]
    /// The key epoch at the pinned head.
    package let epoch: UInt32
}

extension SyncEngine {
    /// This home's sync status, from what it verified last (no network); a device other than the
    /// recovery key whose last heartbeat is older than `staleAfter` seconds is stale (a device
    /// that sent none yet is not: it has not synced since it joined).
    package func status(staleAfter: UInt64 = 7 * 86_400) throws(SyncEngineError) -> SyncStatusInfo? {
        guard let state = try states.load() else { return nil }
        let loaded = LogCache(home: home, account: state.account).load(pinned: state.pinned)
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        let stale = Self.devices(in: loaded, state: state).filter { device in
            guard device.isActive, !device.isRecoveryKey, !device.isThisDevice, let last = device.lastHeartbeat else { return false }
            return now > last && now - last > staleAfter * 1000
        }
        let epoch = loaded.log.epoch
        return SyncStatusInfo(server: state.server, account: state.account, device: state.device, name: state.name, head: state.pinned,
                              items: state.synced.count, isRemoved: state.isRemoved || state.isRefusedByServer,
                              refusal: RefusalNote(home: home).read(), staleDevices: stale, epoch: epoch)
    }

    /// The head this device verified at `sequence` (the pinned one by default), from the verified
    /// log kept here: its fingerprint is what `sync verify` shows.
    package func verifiedHead(at sequence: UInt64? = nil) throws(SyncEngineError) -> LogHead {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        guard let sequence, sequence != state.pinned.sequence else { return state.pinned }
        let loaded = LogCache(home: home, account: state.account).load(pinned: state.pinned)
        guard sequence > 0, let entry = loaded.entries.first(where: { $0.sequence == sequence }) else {
            throw SyncEngineError(.badArgument, "this device has verified positions 1 to \(state.pinned.sequence) only")
        }
        return entry.head
    }

    /// The account's devices, from the verified log kept here (`sync now` brings it up to date).
    package func devices() throws(SyncEngineError) -> [SyncDeviceInfo] {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        // The verified log is enough: no record is opened to list the devices.
        return Self.devices(in: LogCache(home: home, account: state.account).load(pinned: state.pinned), state: state)
    }

    static func devices(in loaded: LogCache.Loaded, state: DeviceState) -> [SyncDeviceInfo] {
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
                                  lastSeen: lastSeen[id] ?? member.addedAt, lastHeartbeat: member.lastHeartbeat, isActive: member.isActive, isThisDevice: id == state.device,
                                  isRecoveryKey: isRecoveryKey)
        }
    }
}
