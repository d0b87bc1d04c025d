import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore

/// Pushing: this device's new versions sealed, signed and chained after the verified head, then
/// verified as any pulled entry once the server took them.
extension SyncEngine {
    /// Pushes `pending` after the verified head; false when another device pushed first (pull,
    /// then again). On success the entries are verified as any, kept, and the merge has them.
    func push(_ pending: [PendingVersion], context: inout RoundContext, client: SyncClient, cache: LogCache) async throws(SyncEngineError) -> Bool {
        let epoch = context.log.epoch
        guard let viewKey = context.state.viewKey(epoch: epoch) else {
            throw SyncEngineError.refusal(.missingKeyShare, "no view key for the account's epoch \(epoch)")
        }
        let bodies = pending.map { version -> EntryBody in
            var payload = version.payload
            defer { zeroize(&payload) }
            return .record(SealedRecord.seal(payload, record: version.record, syncClass: version.syncClass, version: version.version,
                                             isDeleted: version.item == nil, viewKey: viewKey, account: context.state.account))
        }
        return try await pushVerified(Self.chained(bodies, in: context), context: &context, client: client, cache: cache)
    }

    /// Pushes `entries` (this device's, continuing the verified head) in pushes of at most 500;
    /// false when another device pushed first. Each push, once taken, is verified as any pulled
    /// entry, kept and taken into the merge.
    func pushVerified(_ entries: [LogEntry], context: inout RoundContext, client: SyncClient, cache: LogCache) async throws(SyncEngineError) -> Bool {
        var start = context.log.head
        var pushed = 0
        for chunk in stride(from: 0, to: entries.count, by: 500).map({ Array(entries[$0..<min($0 + 500, entries.count)]) }) {
            do {
                _ = try await client.push(LogBatch(head: start, entries: chunk))
            } catch where error.isConflict {
                return false
            } catch {
                throw SyncEngineError(error)
            }
            var next = context
            do {
                next.log = try context.log.verifying(chunk, serverHead: chunk.last!.head)
                for entry in chunk { try absorb(entry, into: &next) }
            } catch {
                throw SyncEngineError(error)
            }
            next.entries += chunk
            next.state.pinned = next.log.head
            next.state.counter = chunk.last!.deviceCounter
            next.cachedBytes = try cache.append(chunk, all: next.entries, after: context.cachedBytes)
            context = next
            start = context.log.head
            pushed += chunk.count
            progress?(SyncProgress(phase: .pushing, done: pushed, total: entries.count))
        }
        return true
    }
}
