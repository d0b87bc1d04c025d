import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

extension SyncEngine {
    /// `sync recover`: on a machine that lost everything, the recovery key's pseudo-device finds
    /// its account, pulls and verifies the log, opens its key share, and adds this machine as a
    /// new device; then a round brings the items. The report of that round.
    package func recover(server: String, key: RecoveryKey, name: String) async throws(SyncEngineError) -> SyncReport {
        guard try states.load() == nil else { throw SyncEngineError(.alreadyJoined, "this keychain home syncs already: `keyhaven sync leave` first") }
        let client = try Self.client(server, http: http)
        let recovery = key.identity()
        let account: AccountID
        do {
            account = try await client.account(of: recovery)
        } catch where error.status == 404 || error.status == 401 {
            throw SyncEngineError(.pairing, "no account on \(client.server) knows that recovery key")
        } catch {
            throw SyncEngineError(error)
        }
        // The log, as the recovery device reads it (its own key share opens the view key).
        let cache = LogCache(home: home, account: account)
        var context = RoundContext(identity: recovery, state: DeviceState(server: client.server, account: account, identity: recovery,
                                                                           name: RecoveryKey.rosterName, viewKey: nil))
        let device = DeviceIdentity()
        for attempt in 0..<20 {
            if attempt > 0 { await Self.backOff(attempt) }
            _ = try await pull(&context, client: client, cache: cache)
            guard context.log.roster[recovery.id]?.isActive == true else {
                throw SyncEngineError(.pairing, "that recovery key was removed from its account")
            }
            guard let viewKey = context.state.viewKey(epoch: context.log.epoch) else {
                throw SyncEngineError.refusal(.missingKeyShare, "the log holds no key share for the recovery key")
            }
            let addition = EntryBody.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: name, viewKey: viewKey, account: account))
            guard try await pushVerified(Self.chained([addition], in: context), context: &context, client: client, cache: cache) else { continue }
            var state = DeviceState(server: client.server, account: account, identity: device, name: name, viewKey: nil)
            state.pinned = context.log.head
            try states.save(state)
            do {
                try markMember(account)
                return try await syncNow()
            } catch {
                try? states.remove()
                cache.remove()
                SyncMembership.leave(home)
                throw error
            }
        }
        throw SyncEngineError(.server, "the log kept moving during 20 rounds: recover again")
    }
}

extension SyncEngine {
    /// `sync rotate-recovery-key`: a new recovery key whose pseudo-device joins the roster, the old
    /// one's removed, and the view key rotated in the same push, so the old key opens nothing
    /// written from then on and the server refuses it. The new key, to show once.
    package func rotateRecoveryKey() async throws(SyncEngineError) -> RecoveryKey {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        guard !state.isRemoved else { throw SyncEngineError(.removed, "this device was removed from its sync account") }
        let key = RecoveryKey(), recovery = key.identity()
        _ = try await appendEntries { context throws(SyncEngineError) in
            let old = Self.recoveryDevices(in: context)
            guard let viewKey = context.state.viewKey(epoch: context.log.epoch) else {
                throw SyncEngineError.refusal(.missingKeyShare, "no view key for the account's epoch")
            }
            let addition = EntryBody.addDevice(RosterAddition(device: recovery.id, keys: recovery.publicKeys, name: RecoveryKey.rosterName,
                                                              viewKey: viewKey, account: context.state.account))
            guard let previous = old.first else { return [addition] }
            guard old.count == 1 else { throw SyncEngineError(.refused, "the account has \(old.count) recovery keys; it should have one") }
            return [addition, .removeDevice(previous),
                    try Self.rotation(context, leaving: previous, joining: [(recovery.id, recovery.publicKeys)])]
        }
        return key
    }

    /// The account's active recovery pseudo-devices (one), by the name the log seals with them.
    static func recoveryDevices(in context: RoundContext) -> [DeviceID] {
        context.entries.compactMap { entry -> DeviceID? in
            guard case .addDevice(let addition) = entry.body, context.log.roster[addition.device]?.isActive == true,
                  let viewKey = context.state.viewKey(epoch: entry.keyEpoch),
                  (try? addition.name(viewKey: viewKey, account: context.state.account)) == RecoveryKey.rosterName else { return nil }
            return addition.device
        }
    }
}
