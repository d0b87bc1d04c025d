import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore

/// Pulling: the verified log from the cache or the server, each entry verified and taken into
/// the merge, all or nothing.
extension SyncEngine {
    /// The context the last round ended with, brought up to `state` (loaded anew from the
    /// keychain), if it is still where this device's pinned head is; nil otherwise.
    func rememberedContext(for state: DeviceState) -> RoundContext? {
        guard var context = remembered.withLock({ $0 }), context.state.account == state.account, context.state.device == state.device,
              context.log.head == state.pinned, context.deferred.isEmpty else { return nil }
        context.state = state
        context.clock.observe(state.clock)
        return context
    }

    /// The verified log from the cache (or none, when it must be pulled again) and the merge over it.
    func loadContext(_ state: DeviceState, identity: DeviceIdentity, cache: LogCache) throws(SyncEngineError) -> RoundContext {
        let loaded = cache.load(pinned: state.pinned)
        var context = RoundContext(identity: identity, state: state)
        (context.log, context.entries, context.cachedBytes) = (loaded.log, loaded.entries, loaded.byteCount)
        do {
            for entry in loaded.entries { try absorb(entry, into: &context) }
            try absorbDeferred(&context, final: true)
        } catch {
            // A cache whose records do not open is dropped: everything is pulled again.
            context = RoundContext(identity: identity, state: state)
        }
        return context
    }

    /// Takes in a verified entry: a record's version into the merge, a key share for this
    /// device, this device's removal.
    func absorb(_ entry: LogEntry, into context: inout RoundContext) throws(SyncError) {
        switch entry.body {
        case .record(let sealed):
            guard let viewKey = context.state.viewKey(epoch: entry.keyEpoch) else {
                context.deferred.append(entry)
                return
            }
            // Opened once to learn its primary key and digest; the plaintext goes at once.
            var payload = try sealed.open(viewKey: viewKey, account: context.state.account)
            defer { zeroize(&payload) }
            let primaryKey = try ItemPayload.decode(payload).primaryKey
            let version = RecordVersion(record: sealed.record, version: sealed.version, device: entry.device, isDeleted: sealed.isDeleted,
                                        primaryKey: primaryKey, content: ItemPayload.digest(payload: payload))
            context.clock.observe(sealed.version)
            context.merge.apply(version)
            context.sources[version] = .sealed(sealed, epoch: entry.keyEpoch)
        case .addDevice(let addition) where addition.device == context.state.device:
            let viewKey = try addition.share.open(with: context.identity, account: context.state.account)
            context.state.keep(viewKey)
        case .removeDevice(let device) where device == context.state.device:
            context.state.isRemoved = true
        case .rotateKeys(let rotation):
            // A member gets the new epoch's key in its share; a device that joined later gets the
            // older ones back from the newer (each rotation wraps the key before it).
            if let share = rotation.shares.first(where: { $0.recipient == context.state.device }) {
                context.state.keep(try share.open(with: context.identity, account: context.state.account))
            }
            guard let newer = context.state.viewKey(epoch: rotation.newEpoch) else {
                context.deferred.append(entry)
                return
            }
            if context.state.viewKey(epoch: rotation.newEpoch - 1) == nil {
                context.state.keep(try rotation.previousKey(under: newer))
            }
        default:
            break
        }
    }

    /// Takes in the deferred entries whose key arrived since, as long as one does; with `final`, a
    /// record still without a key is a refusal (the log never shared that epoch with this device).
    func absorbDeferred(_ context: inout RoundContext, final: Bool) throws(SyncError) {
        var waiting = context.deferred
        while !waiting.isEmpty {
            context.deferred = []
            for entry in waiting { try absorb(entry, into: &context) }
            guard context.deferred.count < waiting.count else { break }
            waiting = context.deferred
        }
        if final, let first = context.deferred.first(where: \.body.isRecord) {
            throw SyncError(.missingKeyShare, "no key share for epoch \(first.keyEpoch) reached this device")
        }
    }

    /// Pulls what is new, verifies it all or nothing, keeps it; how many entries.
    func pull(_ context: inout RoundContext, client: SyncClient, cache: LogCache) async throws(SyncEngineError) -> Int {
        var count = 0
        // The last long poll's answer, taken once, when it starts where this pull does.
        var polled = self.polled.withLock { kept in
            defer { kept = nil }
            return kept.flatMap { $0.after == context.log.head.sequence ? $0.batch : nil }
        }
        while true {
            let batch: LogBatch
            do {
                if let kept = polled {
                    (batch, polled) = (kept, nil)
                } else {
                    batch = try await client.pull(context.state.account, after: context.log.head.sequence, as: context.identity)
                }
            } catch where error.serverCode == "forbidden" {
                // Kept by `syncNow`, the caller that owns this state.
                context.state.isRefusedByServer = true
                throw SyncEngineError(.removed, "the server refuses this device: it was removed from its sync account (its items stay here)")
            } catch {
                throw SyncEngineError(error)
            }
            if context.state.isRefusedByServer { context.state.isRefusedByServer = false }
            let reaches = batch.entries.last?.head ?? batch.head
            var next = context
            do throws(SyncError) {
                if batch.head.sequence < context.state.pinned.sequence {
                    // Behind: a rollback to a prefix of what was verified here, or another history.
                    let index = Int(batch.head.sequence) - 1
                    if index >= 0, index < context.entries.count, context.entries[index].sequence == batch.head.sequence,
                       context.entries[index].head != batch.head {
                        throw SyncError(.forkDetected, "the server's head (\(batch.head)) is another entry than the one verified here at that position")
                    }
                    throw SyncError(.headRegression, "the server's head (\(batch.head.sequence)) is behind the pinned one (\(context.state.pinned.sequence))")
                }
                next.log = try context.log.verifying(batch.entries, serverHead: reaches)
                // Pulling again from the start must pass through the pinned head.
                let pinned = context.state.pinned
                if pinned.sequence > context.log.head.sequence, pinned.sequence <= next.log.head.sequence,
                   !batch.entries.contains(where: { $0.head == pinned }) {
                    throw SyncError(.forkDetected, "the log the server sent does not pass through the pinned head \(pinned)")
                }
                for entry in batch.entries { try absorb(entry, into: &next) }
                try absorbDeferred(&next, final: next.log.head.sequence >= batch.head.sequence)
            } catch {
                throw SyncEngineError(error)
            }
            next.entries += batch.entries
            if next.log.head.sequence > next.state.pinned.sequence { next.state.pinned = next.log.head }
            next.state.clock = next.clock.last
            if !batch.entries.isEmpty { next.cachedBytes = try cache.append(batch.entries, all: next.entries, after: context.cachedBytes) }
            context = next
            count += batch.entries.count
            let left = Int(clamping: batch.head.sequence &- min(batch.head.sequence, context.log.head.sequence))
            progress?(SyncProgress(phase: .pulling, done: count, total: count + left))
            if batch.entries.isEmpty || context.log.head.sequence >= batch.head.sequence { return count }
        }
    }
}
