import FoundationEssentials

extension KeychainDatabase {
    /// `SecItemDelete`: removes every matching item (and any matching row too damaged to
    /// decrypt). With `makeTombstones`, live items become tombstones instead (`kSecUseTombstones`).
    /// Returns how many rows were removed or turned into tombstones.
    package func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool) throws(StoreError) -> Int {
        try delete(query, caller: caller, makeTombstones: makeTombstones, authorize: nil)
    }

    /// The same, with `authorize` shown every live item that matched, in the write's transaction,
    /// before anything changes: it throws to change nothing (the agent's access check).
    package func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool,
                        authorize: ItemAuthorization?) throws(StoreError) -> Int {
        try withSession { session throws(StoreError) in
            try session.delete(query, caller: caller, makeTombstones: makeTombstones, authorize: authorize)
        }
    }
}

extension KeychainDatabase.Session {
    /// What a tombstone keeps: the primary key, the dates, the accessibility, the group.
    private static let tombstoneKeeps: Set<String> = [AttributeName.creationDate.code, AttributeName.modificationDate.code, AttributeName.accessible.code, AttributeName.accessGroup.code, AttributeName.synchronizable.code]

    func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool, authorize: ItemAuthorization? = nil) throws(StoreError) -> Int {
        var query = query
        query.limit = nil
        let groups = try readableGroups(query, caller: caller, forWriting: true)
        return try writeTransaction { () throws(StoreError) -> Int in
            let matches = try select(query, groups: groups, caller: caller, withSecrets: false)
            guard !matches.isEmpty else { throw StoreError(.itemNotFound, "no item matched") }
            try authorize?(matches.compactMap { if case .item(let item) = $0 { item } else { nil } })
            let remove = try connection.prepare("DELETE FROM \(query.itemClass.rawValue) WHERE rowid = ?")
            for match in matches {
                switch match {
                case .item(let item) where makeTombstones && !item.isTombstone:
                    try bury(item)
                case .item(let item):
                    try remove.run([.integer(item.rowID)])
                case .corrupt(let rowID):
                    try remove.run([.integer(rowID)])
                }
            }
            return matches.count
        }
    }

    /// Rewrites a live item as a tombstone: no secret, only the attributes a tombstone keeps.
    private func bury(_ item: StoredItem) throws(StoreError) {
        let primaryKey = Set(item.itemClass.schema.primaryKey.map(\.name))
        var attributes = item.attributes.filter { primaryKey.contains($0.key) || Self.tombstoneKeeps.contains($0.key) }
        attributes[.modificationDate] = .date(Self.laterDate(after: item.attributes[.modificationDate]))
        let keyClass = try Self.keyClass(of: attributes)
        try store(item, attributes: attributes, keyClass: keyClass, secret: nil, accessControlFlags: nil, access: nil, tombstone: true)
    }
}
