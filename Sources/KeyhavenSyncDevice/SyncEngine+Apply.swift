import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore

extension SyncEngine {
    /// Makes the keychain's synchronizable items what the merge says: adds the items it lacks,
    /// rewrites those whose winning version differs, deletes those whose record was deleted, and
    /// notes what was exchanged. Records in `pending` (versions of this device not pushed yet)
    /// are left unnoted, so a failed push is tried again.
    ///
    /// An item changed here while the round ran (it differs from `context.seenLocal`) is neither
    /// written nor noted: the next round takes the change in. Each write also checks, in its own
    /// transaction, that the item is still the one read, so a program's write between the read
    /// and the write is never overwritten with the older version.
    func reconcile(_ context: inout RoundContext, pending: Set<RecordID>, report: inout SyncReport) throws(SyncEngineError) {
        let (local, unreadable) = try localItems()
        let target = context.merge.items
        var applied = 0
        for (primaryKey, live) in target.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            applied += 1
            if applied % 100 == 0 { progress?(SyncProgress(phase: .applying, done: applied, total: target.count)) }
            var digest = local[primaryKey]?.digest
            guard digest == context.seenLocal[primaryKey] else { continue }  // changed here meanwhile
            if digest != live.version.content {
                // Only now, and only for an item to write, is its payload opened.
                guard var item = try Self.item(of: live.version, in: context) else { continue }
                // A copy made here gets the access object its group asks for (an SSH key's).
                if item.access == nil { item.access = ApplicationIdentityReader.replicaAccess(for: item.attributes) }
                do {
                    if let read = local[primaryKey] {
                        var changes = ItemChanges()
                        changes.attributes = item.attributes
                        changes.secret = item.secret
                        changes.accessControlFlags = item.accessControlFlags
                        changes.isReplica = true
                        _ = try database.update(ItemPayload.query(for: item), with: changes, caller: Self.itemCaller,
                                                authorize: Self.unchanged(from: read.item))
                        report.changed += 1
                    } else {
                        _ = try database.add(item, caller: Self.itemCaller, isReplica: true)
                        report.added += 1
                    }
                    digest = try database.find(ItemPayload.query(for: item), caller: Self.itemCaller, withSecrets: true).first
                        .map { ItemPayload.digest(ItemPayload.item($0)) }
                    context.seenLocal[primaryKey] = digest
                } catch where error.code == .interactionNotAllowed || error.code == .duplicateItem {
                    // Its class is locked (or an item of a locked class holds its primary key): it waits.
                    report.waiting += 1
                    continue
                } catch where error.code == .itemNotFound {
                    continue  // changed or deleted here since it was read: the next round
                } catch {
                    throw SyncEngineError(error)
                }
            }
            if !pending.contains(live.record), let digest {
                context.state.synced[primaryKey] = SyncedItem(primaryKey: primaryKey, record: live.record, digest: digest)
            }
        }
        for (primaryKey, synced) in context.state.synced where target[primaryKey] == nil && !pending.contains(synced.record) {
            // Not read because its class is locked: it is deleted once it can be.
            if local[primaryKey] == nil, !unreadable.isEmpty {
                report.waiting += 1
                continue
            }
            guard local[primaryKey]?.digest == context.seenLocal[primaryKey] else { continue }  // changed here meanwhile
            if let entry = local[primaryKey] {
                do {
                    _ = try database.delete(ItemPayload.query(for: entry.item), caller: Self.itemCaller, makeTombstones: false,
                                            authorize: Self.unchanged(from: entry.item))
                    report.deleted += 1
                } catch where error.code == .itemNotFound {
                    if (try? database.find(ItemPayload.query(for: entry.item), caller: Self.itemCaller, withSecrets: false)) != nil {
                        continue  // changed here since it was read: the next round
                    }
                } catch {
                    throw SyncEngineError(error)
                }
            }
            context.seenLocal[primaryKey] = nil
            context.state.synced[primaryKey] = nil
        }
    }

    /// Refuses a write (`.itemNotFound`, and the transaction changes nothing) unless the item it
    /// would change is still `read`. A delete is shown the item without its secret: then the rest
    /// is compared, change date included, which every change moves.
    static func unchanged(from read: NewItem) -> ItemAuthorization {
        { (items) throws(StoreError) in
            guard items.count == 1 else { throw StoreError(.itemNotFound, "the item changed since this round read it") }
            let current = ItemPayload.item(items[0])
            var expected = read
            if current.secret == nil { expected.secret = nil }
            guard ItemPayload.digest(current) == ItemPayload.digest(expected) else {
                throw StoreError(.itemNotFound, "the item changed since this round read it")
            }
        }
    }

    /// The item `version` carries: this device's own, or its sealed record opened with the view key
    /// of its epoch.
    static func item(of version: RecordVersion, in context: RoundContext) throws(SyncEngineError) -> NewItem? {
        switch context.sources[version] {
        case .local(let item)?:
            return item
        case .sealed(let sealed, let epoch)?:
            guard let viewKey = context.state.viewKey(epoch: epoch) else {
                throw SyncEngineError.refusal(.missingKeyShare, "no view key for epoch \(epoch)")
            }
            do {
                var payload = try sealed.open(viewKey: viewKey, account: context.state.account)
                defer { zeroize(&payload) }
                return try ItemPayload.decode(payload).item
            } catch {
                throw SyncEngineError(error)
            }
        case nil:
            throw SyncEngineError(.keychain, "a merged version without its record (a bug)")
        }
    }
}
