import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore

/// What a round did.
package struct SyncReport: Sendable, Hashable {
    /// Entries pulled and verified, and entries pushed.
    package var pulled = 0
    package var pushed = 0
    /// Items added, changed and deleted in this keychain.
    package var added = 0
    package var changed = 0
    package var deleted = 0
    /// Items that wait because their class is locked.
    package var waiting = 0
    /// The head the device and the server agree on.
    package var head = LogHead.empty
}

/// Where a version's item is, for when it must be written: sealed in the log (opened then), or
/// this device's own, not pushed yet.
enum VersionSource: Sendable {
    case sealed(SealedRecord, epoch: UInt32)
    case local(NewItem?)
}

/// One device's view while a round runs: the verified log, the merge over it (digests, no
/// plaintext) and where each version's item is.
struct RoundContext: Sendable {
    let identity: DeviceIdentity
    var state: DeviceState
    var log: LogState
    var entries: [LogEntry]
    var merge = MergeState()
    var sources: [RecordVersion: VersionSource] = [:]
    var clock: HybridClock
    /// Record entries under an epoch whose view key this device does not hold yet (a joining
    /// device reads the records before its own addition, which carries its key share).
    var deferred: [LogEntry] = []
    /// The bytes of the log cache file that hold `entries`.
    var cachedBytes = 0
    /// The digest of each synchronizable item of the keychain as this round last read or wrote
    /// it. An item that differs from it when the merge is applied was changed here while the
    /// round ran: it is left as it is, for the next round to take in.
    var seenLocal: [[UInt8]: [UInt8]] = [:]

    init(identity: DeviceIdentity, state: DeviceState) {
        (self.identity, self.state) = (identity, state)
        (log, entries, clock) = (LogState(account: state.account), [], HybridClock(last: state.clock))
    }
}

extension SyncEngine {
    /// `sync now`: takes in this keychain's changes as new versions, pulls and verifies what is
    /// new, merges, makes the keychain what the merge says, and pushes the new versions; again
    /// when another device pushed first (at most 20 times). What does not verify changes nothing.
    /// A refusal is noted for `sync status`; a round that succeeds clears the note.
    package func syncNow() async throws(SyncEngineError) -> SyncReport {
        let note = RefusalNote(home: home)
        do {
            let report = try await SyncLock(home: home).run { () throws(SyncEngineError) in try await lockedSyncNow() }
            note.clear()
            return report
        } catch {
            note.record(error)
            throw error
        }
    }

    func lockedSyncNow() async throws(SyncEngineError) -> SyncReport {
        guard let state = try states.load() else {
            throw SyncEngineError(.notJoined, "this keychain home does not sync: `keyhaven sync create` or `sync join` first")
        }
        guard !state.isRemoved else { throw SyncEngineError(.removed, "this device was removed from its sync account; its items stay here") }
        let client = try Self.client(state.server, http: http)
        let identity = try state.identity()
        let cache = LogCache(home: home, account: state.account)
        var context: RoundContext
        if let kept = rememberedContext(for: state) {
            context = kept
        } else {
            context = try loadContext(state, identity: identity, cache: cache)
        }
        remembered.withLock { $0 = nil }
        var report = SyncReport()
        // The edits made here, as versions dated now (or by the item's change date, if earlier).
        var pending = try localChanges(&context)
        var lostRaces = 0
        for _ in 0..<20 {
            if lostRaces > 0 { await Self.backOff(lostRaces) }
            do {
                report.pulled += try await pull(&context, client: client, cache: cache)
            } catch {
                if context.state.isRefusedByServer { try states.save(context.state) }
                throw error
            }
            if context.state.isRemoved {
                try states.save(context.state)
                SyncMembership.leave(home)
                throw SyncEngineError(.removed, "this device was removed from its sync account; its items stay here")
            }
            try Self.requireRotated(context.log)
            for pendingVersion in pending {
                let version = pendingVersion.recordVersion(device: context.state.device)
                context.merge.apply(version)
                context.sources[version] = .local(pendingVersion.item)
            }
            try reconcile(&context, pending: Set(pending.map(\.record)), report: &report)
            try states.save(context.state)
            if pending.isEmpty {
                if let heartbeat = heartbeatDue(context) {
                    guard try await pushVerified([heartbeat], context: &context, client: client, cache: cache) else {
                        lostRaces += 1
                        continue
                    }
                    try states.save(context.state)
                    report.pushed += 1
                }
                report.head = context.log.head
                let finished = context
                remembered.withLock { $0 = finished }
                return report
            }
            guard try await push(pending, context: &context, client: client, cache: cache) else {
                lostRaces += 1
                continue
            }
            report.pushed += pending.count
            try reconcile(&context, pending: [], report: &report)
            try states.save(context.state)
            // Duplicates the merge found (two devices created one item) are tombstoned next.
            pending = try localChanges(&context)
        }
        throw SyncEngineError(.server, "the log kept moving during 20 rounds: sync again")
    }

}

extension SyncEngine {
    /// How often a device signs a heartbeat into the log (`KEYHAVEN_SYNC_HEARTBEAT_SECONDS`, six
    /// hours by default): other devices warn when one's heartbeats stop coming.
    static var heartbeatInterval: UInt64 {
        let seconds = ProcessInfo.processInfo.environment["KEYHAVEN_SYNC_HEARTBEAT_SECONDS"].flatMap(UInt64.init) ?? 6 * 3600
        return max(1, seconds) * 1000
    }

    /// This device's heartbeat entry, when its last one is older than the interval (or it has
    /// sent none); nil otherwise.
    func heartbeatDue(_ context: RoundContext) -> LogEntry? {
        guard let member = context.log.roster[context.state.device], member.isActive else { return nil }
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        if let last = member.lastHeartbeat, now < last || now - last < Self.heartbeatInterval { return nil }
        return Self.chained([.heartbeat(now)], in: context).first
    }

    /// After a lost race: a random pause growing with the attempts (up to 50 ms times the attempt),
    /// so devices pushing at once do not keep colliding.
    static func backOff(_ attempt: Int) async {
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...(50 * min(attempt, 10)))))
    }

    /// Waits up to `seconds` for the server to have entries after the verified head (a long
    /// poll); whether it has. Nothing is applied: the entries are kept for the next round, which
    /// verifies them as its first pull instead of asking the server for them again.
    package func waitForRemoteChange(seconds: Int) async throws(SyncEngineError) -> Bool {
        guard let state = try states.load(), !state.isRemoved else { return false }
        let client = try Self.client(state.server, http: http), identity = try state.identity()
        let batch: LogBatch
        do {
            batch = try await client.pull(state.account, after: state.pinned.sequence, wait: seconds, as: identity)
        } catch {
            throw SyncEngineError(error)
        }
        guard !batch.entries.isEmpty else { return false }
        polled.withLock { $0 = (state.pinned.sequence, batch) }
        return true
    }
}
