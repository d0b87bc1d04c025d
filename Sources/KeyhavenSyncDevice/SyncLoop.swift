import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore
import Synchronization

/// The agent's background sync: while its home takes part in sync, a round after each change here
/// (a write through the agent, an unlock, or the keychain file changed by another process, looked
/// at every half second) and whenever the server has something new (a long poll), at least once a
/// minute; after a failure, again after a back-off of up to a minute. What it reports goes to
/// `report` (a failure's message once, until it changes): never an item.
package final class SyncLoop: Sendable {
    let home: KeychainHome
    let keychain: @Sendable () throws(StoreError) -> KeychainDatabase
    let report: @Sendable (String) -> Void
    private let poked = Atomic<Bool>(false)

    package init(home: KeychainHome, keychain: @escaping @Sendable () throws(StoreError) -> KeychainDatabase,
                 report: @escaping @Sendable (String) -> Void) {
        (self.home, self.keychain, self.report) = (home, keychain, report)
    }

    /// Something changed here: a round soon.
    package func poke() { poked.store(true, ordering: .releasing) }

    /// Runs until the task is cancelled.
    package func run() async {
        var lastMessage: String?
        var backOff = 1
        // Kept from round to round (it remembers the verified log), while the keychain is the same.
        var engine: SyncEngine?
        while !Task.isCancelled {
            guard SyncMembership.isMember(home) else {
                try? await Task.sleep(for: .seconds(2))
                continue
            }
            var wait = 60
            // Taken before the round: a change made while it runs is seen at once. (The round's
            // own writes are seen too: one more round, which finds nothing and writes nothing.)
            let stamp = stampOfKeychain()
            do {
                let database = try openKeychain()
                let current = engine.flatMap { $0.database === database ? $0 : nil } ?? SyncEngine(database: database, home: home)
                engine = current
                poked.store(false, ordering: .relaxed)
                _ = try await current.syncNow()
                if lastMessage != nil { report("sync: in step again") }
                (lastMessage, backOff) = (nil, 1)
                await waitForChange(current, since: stamp, seconds: wait)
                continue
            } catch {
                if error.message != lastMessage { report("sync: \(error.message)") }
                lastMessage = error.message
                if error.code == .notJoined { continue }
                wait = backOff
                backOff = min(backOff * 2, 60)
            }
            // After a failure, the back-off: only a change after it cuts it short.
            await waitForChange(nil, since: stampOfKeychain(), seconds: wait)
        }
    }

    /// A round asked for (`keyhaven sync now` through the agent), on the agent's keychain; it
    /// takes turns with the background's rounds through the home's sync lock.
    package func roundNow() async throws(SyncEngineError) -> SyncReport {
        try await SyncEngine(database: try openKeychain(), home: home).syncNow()
    }

    /// The status (`keyhaven sync status` through the agent), read from the agent's keychain.
    package func status(staleAfter: UInt64) throws(SyncEngineError) -> SyncStatusInfo? {
        try SyncEngine(database: try openKeychain(), home: home).status(staleAfter: staleAfter)
    }

    /// The account's devices (`keyhaven sync devices` through the agent).
    package func devices() throws(SyncEngineError) -> [SyncDeviceInfo] {
        try SyncEngine(database: try openKeychain(), home: home).devices()
    }

    private func openKeychain() throws(SyncEngineError) -> KeychainDatabase {
        do {
            return try keychain()
        } catch {
            throw SyncEngineError(error)
        }
    }

    /// How long one long poll of the server waits (`KEYHAVEN_SYNC_LONG_POLL_SECONDS`, 1 to 25;
    /// 25 by default): a test sets a short one to see that the polls follow one another.
    static let longPollSeconds: Int = {
        let asked = ProcessInfo.processInfo.environment["KEYHAVEN_SYNC_LONG_POLL_SECONDS"].flatMap(Int.init) ?? 25
        return min(max(asked, 1), 25)
    }()

    /// Returns after `seconds`, or sooner: a poke, the keychain file changed, or (with `engine`)
    /// the server has entries after the verified head.
    private func waitForChange(_ engine: SyncEngine?, since stamp: [FileSecurity.Stamp?], seconds: Int) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            group.addTask { [self] in
                while !Task.isCancelled {
                    if poked.load(ordering: .acquiring) || stampOfKeychain() != stamp {
                        // A moment for the writes that come together (an update is often several).
                        try? await Task.sleep(for: .milliseconds(200))
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
            if let engine {
                group.addTask {
                    // The server's long poll, again after each one that ends empty, so the device
                    // always listens. After an error (the server restarting, a pooled connection
                    // it had closed), again after a pause that doubles from 1 s up to 32 s, so a
                    // server that comes back is heard from within that pause, not at the timer.
                    // An empty answer at once (the device removed) waits out the timer.
                    let poll = min(seconds, Self.longPollSeconds)
                    var pause = 1
                    while !Task.isCancelled {
                        let started = ContinuousClock.now
                        do {
                            if try await engine.waitForRemoteChange(seconds: poll) { return }
                            pause = 1
                            if ContinuousClock.now - started < .seconds(poll) / 2 { break }
                        } catch {
                            try? await Task.sleep(for: .seconds(pause))
                            pause = min(pause * 2, 32)
                        }
                    }
                    try? await Task.sleep(for: .seconds(seconds))
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// The default keychain's file and its write-ahead log, as `stat` sees them.
    private func stampOfKeychain() -> [FileSecurity.Stamp?] {
        let path = (try? KeychainPreferences.load(home).defaultPath(home)) ?? home.defaultKeychainPath
        return [FileSecurity.stamp(path), FileSecurity.stamp(path + "-wal")]
    }
}
