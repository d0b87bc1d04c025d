import FoundationEssentials

extension KeychainDatabase {
    /// `SecItemUpdate`: changes every matching item in one transaction; if any change fails
    /// (a duplicate key, a locked class) nothing is changed. Returns how many items changed.
    package func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller) throws(StoreError) -> Int {
        try update(query, with: changes, caller: caller, authorize: nil)
    }

    /// The same, with `authorize` shown every item that matched, in the write's transaction, before
    /// anything changes: it throws to change nothing (the agent's access check).
    package func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller,
                        authorize: ItemAuthorization?) throws(StoreError) -> Int {
        try withSession { session throws(StoreError) in try session.update(query, with: changes, caller: caller, authorize: authorize) }
    }
}

/// Shown the items a write would change, before it changes them; throws to stop it.
package typealias ItemAuthorization = ([StoredItem]) throws(StoreError) -> Void

extension KeychainDatabase.Session {
    /// The key attributes an update may not change (extractability and sensitivity).
    static let fixedKeyAttributes: Set<String> = [AttributeName.isExtractable.code, AttributeName.isSensitive.code, AttributeName.wasAlwaysSensitive.code, AttributeName.wasNeverExtractable.code]

    func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller, authorize: ItemAuthorization? = nil) throws(StoreError) -> Int {
        var query = query
        query.limit = nil
        // A key's extractability is fixed when it is made: otherwise any client could turn a key
        // that must never leave the keychain into one that may.
        // (A synced copy carries them unchanged from the device that made the key.)
        if query.itemClass == .key, !changes.isReplica, !changes.attributes.keys.filter(Self.fixedKeyAttributes.contains).isEmpty {
            throw StoreError(.invalidParameter, "a key's kSecAttrIsExtractable and kSecAttrIsSensitive cannot be changed")
        }
        let groups = try readableGroups(query, caller: caller, forWriting: true)
        if let group = changes.attributes[.accessGroup] {
            guard case .string(let name) = group, name != Caller.tokenGroup,
                  caller.isUnrestricted || caller.writableGroups.contains(name) else {
                throw StoreError(.missingEntitlement, "the caller may not move items to the access group it named")
            }
        }
        return try writeTransaction { () throws(StoreError) -> Int in
            let items = try select(query, groups: groups, caller: caller, withSecrets: true).liveItems()
            try authorize?(items)
            for item in items { try rewrite(item, with: changes) }
            return items.count
        }
    }

    private func rewrite(_ item: StoredItem, with changes: ItemChanges) throws(StoreError) {
        var attributes = item.attributes.merging(changes.attributes) { _, new in new }
        let secret = changes.secret ?? item.secret
        try Self.checkSizes(attributes, secret: secret)
        var access = try changes.access.map { (access) throws(StoreError) in try ApplicationIdentityReader.resolve(access) }
        // The enrolled-biometry digest is the item's, not the caller's to give or drop.
        if access != nil { access?.biometrySet = item.access?.biometrySet }
        // A new access object alone is not a change of the item (macOS keeps its date).
        let accessOnly = changes.attributes.isEmpty && changes.secret == nil && changes.accessControlFlags == nil
        if accessOnly, access != nil {
            try store(item, attributes: item.attributes, keyClass: try Self.keyClass(of: item.attributes), secret: item.secret,
                      accessControlFlags: item.accessControlFlags, access: access, tombstone: false)
            return
        }
        if !changes.isReplica || changes.attributes[.modificationDate] == nil {
            attributes[.modificationDate] = .date(Self.laterDate(after: item.attributes[.modificationDate]))
        }
        attributes[.sha1] = .data(Self.digest(attributes, secret: secret))
        let keyClass = try Self.keyClass(of: attributes)
        if !changes.isReplica, Self.changesKey(item.itemClass, from: item.attributes, to: attributes) {
            try checkKeyFree(item.itemClass, attributes: attributes, excluding: item.rowID)
        }
        try store(item, attributes: attributes, keyClass: keyClass, secret: secret,
                  accessControlFlags: changes.accessControlFlags ?? item.accessControlFlags, access: access ?? item.access,
                  tombstone: false)
    }

    /// Re-encrypts a row in place (same row id and persistent reference) with a fresh tag.
    func store(_ item: StoredItem, attributes: [String: AttributeValue], keyClass: KeyClass, secret: Data?,
               accessControlFlags: UInt64?, access: ItemAccess?, tombstone: Bool) throws(StoreError) {
        guard case .uuid(_, let persistentID) = item.persistentReference else {
            throw StoreError(.internalError, "a stored item has no persistent identifier")
        }
        let metadata = ItemMetadata(attributes: attributes, secretTag: KeychainCrypto.randomBytes(16),
                                    hasSecret: secret != nil, accessControlFlags: accessControlFlags, access: access)
        // The blobs always; a search column only if its value changes. SQLite rewrites the
        // entries of every index whose column is assigned, even to the same value: a new
        // password would otherwise touch a dozen index pages (scattered in a large keychain)
        // where it changes two (the modification date and the digest).
        // A column's keyed hash changes exactly when its value's match key does: compare the
        // values, and hash only the new values of the columns that change (hashing is a large
        // share of an update's work: docs/benchmarks.md, "Instructions per call").
        var assigned = Self.blobColumns
        var assignedValues = try sealBlobs(item.itemClass, persistentID: persistentID, keyClass: keyClass, metadata: metadata,
                                           secret: secret, tombstone: tombstone)
        for attribute in item.itemClass.schema.attributes {
            let new = Self.effectiveValue(attribute, in: attributes)
            switch (Self.effectiveValue(attribute, in: item.attributes), new) {
            case (nil, nil): continue
            case (let old?, let new?) where old.matches(new, as: attribute.kind): continue
            default: break
            }
            assigned.append(attribute.column)
            assignedValues.append(try new.map { (value) throws(StoreError) in .blob(try indexHash(item.itemClass, attribute, value)) } ?? .null)
        }
        let shape = StatementShape(table: item.itemClass.rawValue, names: ["UPDATE"] + assigned, numbers: [])
        let statement = try connection.prepare(shape: shape) {
            "UPDATE \(item.itemClass.rawValue) SET \(assigned.map { "\($0) = ?" }.joined(separator: ", ")) WHERE rowid = ?"
        }
        try writeResolvingConflicts(item.itemClass, attributes: attributes, excluding: item.rowID) { () throws(StoreError) in
            try statement.run(assignedValues + [.integer(item.rowID)])
        }
        if item.itemClass == .genericPassword {
            let name = SecretServiceAttributes.attributeName
            try writeSecretAttributes(row: item.rowID, old: item.attributes[name], new: attributes[name])
        }
    }

    /// Now, or 1 ms after `previous` if the clock has not moved past it (Apple's rule: a
    /// modification date always increases).
    static func laterDate(after previous: AttributeValue?) -> Date {
        let now = Date()
        guard case .date(let old)? = previous, now <= old else { return now }
        return old.addingTimeInterval(0.001)
    }
}
