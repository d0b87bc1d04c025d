
/// The synced items as the log makes them, by SYNC.md's rule: per record the version that
/// outranks the others wins, edit or tombstone; a version that arrives when a higher one is already
/// there loses and is kept in the conflict history, never silently dropped. When two records hold
/// the same primary key (two devices created the same item), the lower record id survives with the
/// content of the higher-ranked version, and the other is to be tombstoned. The winners and the
/// live items depend only on the set of versions applied, not on their order, so every device
/// computes the same result.
package struct MergeState: Hashable, Sendable {
    /// The winning version of each record.
    package private(set) var records: [RecordID: RecordVersion] = [:]
    /// Versions that lost to a higher one already there, in the order they arrived.
    package private(set) var conflicts: [RecordVersion] = []

    package init() {}

    /// Takes in one version (from a verified, opened log entry). Applying it again changes nothing.
    package mutating func apply(_ version: RecordVersion) {
        guard let current = records[version.record] else {
            records[version.record] = version
            return
        }
        if current == version { return }
        if version.outranks(current) {
            records[version.record] = version
        } else if !conflicts.contains(version) {
            conflicts.append(version)
        }
    }

    /// The items the keychain holds: for each primary key with a record that is not deleted, the
    /// lowest such record id, carrying the highest-ranked live content among them.
    package var items: [[UInt8]: LiveItem] {
        var byKey: [[UInt8]: [RecordVersion]] = [:]
        for version in records.values where !version.isDeleted { byKey[version.primaryKey, default: []].append(version) }
        var items: [[UInt8]: LiveItem] = [:]
        for (key, versions) in byKey {
            let survivor = versions.map(\.record).min()!
            let content = versions.max { $1.outranks($0) }!
            items[key] = LiveItem(record: survivor, version: content)
        }
        return items
    }

    /// Records that hold a primary key a lower record id holds too: a device tombstones them.
    package var duplicateRecords: [RecordID] {
        let survivors = Set(items.values.map(\.record))
        return records.values.filter { !$0.isDeleted && !survivors.contains($0.record) }.map(\.record).sorted()
    }
}
