import AsyncHTTPClient
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore
import Synchronization

/// A device's sync engine on its default keychain: it pulls and verifies the account's log,
/// merges every version by the rule every device applies alike (``MergeState``), makes the
/// keychain's synchronizable items what the merge says, and pushes what changed here as new
/// sealed records, until the server and the keychain agree (docs/sync.md, "A device's round").
package final class SyncEngine: Sendable {
    /// Everything but the items: only this caller, with every access group, reads and writes them.
    static let itemCaller = Caller(accessGroups: ["*"])

    let database: KeychainDatabase
    let home: KeychainHome
    let http: HTTPClient
    let states: DeviceStateStore
    /// Told how far a round is (for a command on a terminal to show).
    let progress: (@Sendable (SyncProgress) -> Void)?
    /// The verified log and merge after the last round that succeeded: the next round starts from
    /// it instead of verifying and opening the whole cached log again (the agent's rounds), as
    /// long as the head this device pinned is still the one it ended at.
    let remembered = Mutex<RoundContext?>(nil)
    /// What the last long poll brought (``waitForRemoteChange(seconds:)``) and the sequence it
    /// asked after: the next round's first pull, when it starts there, so a change crosses the
    /// wire once. Verified like any pull, when the round takes it in.
    let polled = Mutex<(after: UInt64, batch: LogBatch)?>(nil)

    package init(database: KeychainDatabase, home: KeychainHome, http: HTTPClient = SyncClient.defaultHTTP,
                 progress: (@Sendable (SyncProgress) -> Void)? = nil) {
        (self.database, self.home, self.http, self.progress) = (database, home, http, progress)
        states = DeviceStateStore(database: database)
    }

    /// The device's state, or nil when this home takes no part in sync.
    package func state() throws(SyncEngineError) -> DeviceState? { try states.load() }

    /// `sync create`: a new account with this device and a recovery pseudo-device on it; the
    /// recovery key (shown once). Then a first round pushes the synchronizable items there are.
    package func create(server: String, name: String) async throws(SyncEngineError) -> RecoveryKey {
        guard try states.load() == nil else {
            throw SyncEngineError(.alreadyJoined, "this keychain home syncs already: `keyhaven sync leave` first")
        }
        let client = try Self.client(server, http: http)
        let identity = DeviceIdentity(), account = AccountID(), viewKey = ViewKey(epoch: 1), recovery = RecoveryKey()
        let genesis = LogEntry(.addDevice(RosterAddition(device: identity.id, keys: identity.publicKeys, name: name, viewKey: viewKey,
                                                         account: account)),
                               account: account, after: .empty, counter: 1, epoch: 1, signedBy: identity)
        let recoveryDevice = recovery.identity()
        let addRecovery = LogEntry(.addDevice(RosterAddition(device: recoveryDevice.id, keys: recoveryDevice.publicKeys, name: RecoveryKey.rosterName,
                                                             viewKey: viewKey, account: account)),
                                   account: account, after: genesis.head, counter: 2, epoch: 1, signedBy: identity)
        do {
            _ = try await client.createAccount(genesis)
            _ = try await client.push(LogBatch(head: genesis.head, entries: [addRecovery]))
        } catch {
            throw SyncEngineError(error)
        }
        var state = DeviceState(server: client.server, account: account, identity: identity, name: name, viewKey: viewKey)
        state.counter = 2
        state.pinned = addRecovery.head
        _ = try LogCache(home: home, account: account).append([genesis, addRecovery], all: [genesis, addRecovery], after: 0)
        try states.save(state)
        try markMember(account)
        _ = try await syncNow()
        return recovery
    }

    /// `sync leave`: forgets the account here (the keychain's items stay, no longer synced).
    package func leave() throws(SyncEngineError) {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        LogCache(home: home, account: state.account).remove()
        try states.remove()
        SyncMembership.leave(home)
    }

    /// Marks this home as taking part in sync (`isSynchronizationAvailable`).
    func markMember(_ account: AccountID) throws(SyncEngineError) {
        do {
            try SyncMembership.join(home, account: account.hex)
        } catch {
            throw SyncEngineError(.keychain, "the sync marker could not be written: \(error.message)")
        }
    }

    static func client(_ server: String, http: HTTPClient) throws(SyncEngineError) -> SyncClient {
        do {
            return try SyncClient(server: server, http: http)
        } catch {
            throw SyncEngineError(.badArgument, error.message)
        }
    }
}
