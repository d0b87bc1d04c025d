import FoundationEssentials
import KeychainModel
import KeyhavenSync
import KeyhavenSyncProtocol

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
                throw SyncEngineError(.refused, "the log holds no key share for the recovery key", refusal: .missingKeyShare)
            }
            let counter = (context.log.roster[recovery.id]?.lastCounter ?? 0) + 1
            let entry = LogEntry(.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: name, viewKey: viewKey, account: account)),
                                 account: account, after: context.log.head, counter: counter, epoch: context.log.epoch, signedBy: recovery)
            guard try await pushVerified([entry], context: &context, client: client, cache: cache) else { continue }
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
