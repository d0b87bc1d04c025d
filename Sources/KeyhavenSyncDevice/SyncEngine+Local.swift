import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenSyncCore

/// A version this device made of one of its items, not yet in the log.
struct PendingVersion: Sendable {
    let record: RecordID
    let primaryKey: [UInt8]
    let item: NewItem?
    let syncClass: SyncClass
    let version: UInt64

    var payload: [UInt8] { ItemPayload.encode(primaryKey: primaryKey, item: item) }

    func recordVersion(device: DeviceID) -> RecordVersion {
        var bytes = payload
        defer { zeroize(&bytes) }
        return RecordVersion(record: record, version: version, device: device, isDeleted: item == nil, primaryKey: primaryKey,
                             content: ItemPayload.digest(payload: bytes))
    }
}

/// An item of this keychain, as sync sees it.
struct LocalItem {
    let item: NewItem
    let digest: [UInt8]
}

extension SyncEngine {
    /// The keychain's synchronizable items, by primary key, and the accessibility classes that
    /// could not be read (their key is not in memory: the keychain is locked). Read class by
    /// class, so a locked class leaves the others readable.
    func localItems() throws(SyncEngineError) -> (items: [[UInt8]: LocalItem], unreadable: Set<String>) {
        var items: [[UInt8]: LocalItem] = [:]
        var unreadable: Set<String> = []
        for itemClass in ItemClass.allCases {
            for accessibility in ItemPayload.syncingAccessibilities {
                var query = ItemQuery(itemClass: itemClass)
                query.criteria = .named([.synchronizable: .number(1), .accessible: .string(accessibility)])
                query.limit = nil
                let stored: [StoredItem]
                do {
                    stored = try database.find(query, caller: Self.itemCaller, withSecrets: true)
                } catch where error.code == .itemNotFound {
                    continue
                } catch where error.code == .interactionNotAllowed {
                    unreadable.insert(accessibility)
                    continue
                } catch {
                    throw SyncEngineError(error)
                }
                for found in stored {
                    let item = ItemPayload.item(found)
                    items[ItemPayload.primaryKey(item)] = LocalItem(item: item, digest: ItemPayload.digest(item))
                }
            }
        }
        return (items, unreadable)
    }

    /// The versions this device owes the log: its items added or changed since they were last
    /// exchanged, tombstones for those deleted here, and for records the merge found duplicated.
    func localChanges(_ context: inout RoundContext) throws(SyncEngineError) -> [PendingVersion] {
        let (local, unreadable) = try localItems()
        context.seenLocal = local.mapValues(\.digest)
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        var pending: [PendingVersion] = []
        func version(_ item: NewItem?) -> UInt64 {
            var milliseconds = now
            if case .date(let changed)? = item?.attributes[.modificationDate] {
                milliseconds = min(now, UInt64(max(0, changed.timeIntervalSince1970 * 1000)))
            }
            return context.clock.tick(milliseconds: milliseconds)
        }
        let live = context.merge.items
        for (primaryKey, entry) in local.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            guard let syncClass = ItemPayload.syncClass(entry.item) else { continue }
            let record: RecordID
            if let synced = context.state.synced[primaryKey] {
                guard synced.digest != entry.digest else { continue }
                record = synced.record
            } else if let existing = live[primaryKey] {
                guard existing.version.content != entry.digest else { continue }
                record = existing.record
            } else {
                record = RecordID()
            }
            pending.append(PendingVersion(record: record, primaryKey: primaryKey, item: entry.item, syncClass: syncClass, version: version(entry.item)))
        }
        // An item missing from what could be read is deleted only if nothing was locked away:
        // an item of a locked class is not gone, it waits.
        for (primaryKey, synced) in context.state.synced.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) })
        where unreadable.isEmpty && local[primaryKey] == nil && context.merge.records[synced.record]?.isDeleted == false {
            pending.append(PendingVersion(record: synced.record, primaryKey: primaryKey, item: nil, syncClass: .c, version: version(nil)))
        }
        for record in context.merge.duplicateRecords {
            guard let winner = context.merge.records[record], !pending.contains(where: { $0.record == record }) else { continue }
            // The surviving record takes the content the merge chose, which may be this
            // duplicate's: before the duplicate goes, the survivor gets a version carrying it
            // (else the tombstone would bring the survivor's older content back).
            if let survivor = live[winner.primaryKey], context.merge.records[survivor.record] != survivor.version,
               !pending.contains(where: { $0.record == survivor.record }) {
                guard let entry = local[winner.primaryKey], entry.digest == survivor.version.content,
                      let syncClass = ItemPayload.syncClass(entry.item) else { continue }  // not here yet (locked): later
                pending.append(PendingVersion(record: survivor.record, primaryKey: winner.primaryKey, item: entry.item, syncClass: syncClass,
                                              version: version(entry.item)))
            }
            pending.append(PendingVersion(record: record, primaryKey: winner.primaryKey, item: nil, syncClass: .c, version: version(nil)))
        }
        context.state.clock = context.clock.last
        return pending
    }
}
