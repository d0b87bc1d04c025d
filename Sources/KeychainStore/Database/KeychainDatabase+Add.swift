import FoundationEssentials

extension KeychainDatabase {
    /// `SecItemAdd`: stores one new item with Apple's defaults; `.duplicateItem` if its primary
    /// key is taken by a live item (a tombstone or a damaged row in the way is replaced). A synced
    /// copy of another device's item (`isReplica`, the sync engine's) keeps its own creation and
    /// change dates.
    package func add(_ item: NewItem, caller: Caller) throws(StoreError) -> StoredItem {
        try add(item, caller: caller, isReplica: false)
    }

    package func add(_ item: NewItem, caller: Caller, isReplica: Bool) throws(StoreError) -> StoredItem {
        try withSession { session throws(StoreError) in try session.add(item, caller: caller, isReplica: isReplica) }
    }
}

extension KeychainDatabase.Session {
    func add(_ item: NewItem, caller: Caller, isReplica: Bool = false) throws(StoreError) -> StoredItem {
        let itemClass = item.itemClass
        var attributes = try completedAttributes(item, caller: caller)
        if isReplica {
            for name in [AttributeName.creationDate.code, AttributeName.modificationDate.code] where item.attributes[name] != nil { attributes[name] = item.attributes[name] }
        }
        try Self.checkSizes(attributes, secret: item.secret)
        let keyClass = try Self.keyClass(of: attributes)
        _ = try keys.keys(for: keyClass)  // locked: fail before anything else, as Apple does
        attributes[.sha1] = .data(Self.digest(attributes, secret: item.secret))

        let persistentID = KeychainCrypto.randomBytes(16)
        // The caller marker (`SecTrustedApplicationCreateFromPath(nil)`) names this process when it
        // reaches the engine: the agent resolves it to its client before.
        let access = try item.access.map { (access) throws(StoreError) in try ApplicationIdentityReader.resolve(access) }
        let metadata = ItemMetadata(attributes: attributes, secretTag: KeychainCrypto.randomBytes(16),
                                    hasSecret: item.secret != nil, accessControlFlags: item.accessControlFlags, access: access)
        let values = try sealRow(itemClass, persistentID: persistentID, keyClass: keyClass, metadata: metadata,
                                 secret: item.secret, tombstone: false)
        let rowID = try writeTransaction { () throws(StoreError) -> Int64 in
            // A synced copy is another device's item as it is: its key was checked where it was made.
            if !isReplica {
                try checkKeyFree(itemClass, attributes: attributes, columns: Array(values.dropFirst(Self.blobColumns.count)), excluding: nil)
            }
            try writeResolvingConflicts(itemClass, attributes: attributes, excluding: nil) { () throws(StoreError) in
                // The statement's text is built once a class: joining it is costly beside an add.
                let insert = try connection.prepare(shape: StatementShape(table: itemClass.rawValue, names: ["INSERT"], numbers: [])) {
                    let columns = ["persistref"] + Self.rowColumns(itemClass)
                    return "INSERT INTO \(itemClass.rawValue)(\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
                }
                try insert.run([.blob(persistentID)] + values)
            }
            let rowID = try connection.prepare("SELECT last_insert_rowid()").rows().first?.first?.integer ?? 0
            if itemClass == .genericPassword {
                try writeSecretAttributes(row: rowID, old: nil, new: attributes[SecretServiceAttributes.attributeName])
            }
            return rowID
        }
        return StoredItem(itemClass: itemClass, rowID: rowID, persistentReference: .uuid(itemClass, persistentID),
                          isTombstone: false, attributes: attributes, accessControlFlags: item.accessControlFlags,
                          secret: item.secret, access: access)
    }

    /// The caller's attributes plus Apple's add-time defaults (`SecItemServer.c`, `SecItemDb.c`'s `query_pre_add`).
    private func completedAttributes(_ item: NewItem, caller: Caller) throws(StoreError) -> [String: AttributeValue] {
        var attributes = item.attributes
        let writable = caller.writableGroups.filter { $0 != "*" }
        guard !caller.accessGroups.isEmpty, !caller.writableGroups.isEmpty else {
            throw StoreError(.missingEntitlement, "the caller has no writable access group")
        }
        if let group = attributes[.accessGroup] {
            guard case .string(let name) = group, name != Caller.tokenGroup,
                  caller.isUnrestricted || writable.contains(name) else {
                throw StoreError(.missingEntitlement, "the caller may not write to the access group it named")
            }
        } else {
            guard let first = writable.first else { throw StoreError(.missingEntitlement, "the caller has no default access group") }
            attributes[.accessGroup] = .string(first)
        }
        if attributes[.accessible] == nil {
            // Apple's default: WhenUnlocked, but Always for certificates (`SecItemDb.c`'s `query_pre_add`).
            attributes[.accessible] = .string(item.itemClass == .certificate ? KeyClass.always.rawValue : KeyClass.whenUnlocked.rawValue)
        }
        if attributes[.synchronizable] == nil { attributes[.synchronizable] = .number(0) }
        let now = Date()
        attributes[.creationDate] = .date(now)
        attributes[.modificationDate] = .date(now)
        for attribute in item.itemClass.schema.attributes where attributes[attribute.name] == nil && !attribute.isHiddenWhenUnset {
            if let value = attribute.defaultValue { attributes[attribute.name] = value }
        }
        return attributes
    }

    static func keyClass(of attributes: [String: AttributeValue]) throws(StoreError) -> KeyClass {
        guard case .string(let name)? = attributes[.accessible], let keyClass = KeyClass(rawValue: name) else {
            throw StoreError(.invalidParameter, "kSecAttrAccessible has a value that is not an accessibility class")
        }
        return keyClass
    }

    static func checkSizes(_ attributes: [String: AttributeValue], secret: Data?) throws(StoreError) {
        if let secret, secret.count > KeychainDatabase.Limits.secretBytes {
            throw StoreError(.dataTooLarge, "the secret is larger than \(KeychainDatabase.Limits.secretBytes) bytes")
        }
        for (name, value) in attributes where value.comparableBytes.count > KeychainDatabase.Limits.attributeBytes {
            throw StoreError(.dataTooLarge, "attribute \(name) is larger than \(KeychainDatabase.Limits.attributeBytes) bytes")
        }
    }

    /// Runs a write; if it hits the UNIQUE constraint, removes a tombstone or damaged row that
    /// holds the key (never a live item, never the row being rewritten) and runs it once more.
    func writeResolvingConflicts(_ itemClass: ItemClass, attributes: [String: AttributeValue], excluding rowID: Int64?,
                                 _ write: () throws(StoreError) -> Void) throws(StoreError) {
        do {
            try write()
        } catch where error.code == .duplicateItem {
            guard try removeStaleHolder(itemClass, attributes: attributes, excluding: rowID) else {
                throw StoreError(.duplicateItem, "an item with the same primary key already exists")
            }
            try write()
        }
    }

    private func removeStaleHolder(_ itemClass: ItemClass, attributes: [String: AttributeValue], excluding: Int64?) throws(StoreError) -> Bool {
        let primaryKey = itemClass.schema.primaryKey
        let sql = "SELECT rowid, persistref, keyclass, tomb, metadata, secret FROM \(itemClass.rawValue) WHERE "
            + primaryKey.map { "\($0.column) = ?" }.joined(separator: " AND ")
        let values = try primaryKey.map { (attribute) throws(StoreError) -> SQLiteValue in
            guard let value = Self.effectiveValue(attribute, in: attributes) else { return .null }
            return .blob(try indexHash(itemClass, attribute, value))
        }
        guard let row = try connection.prepare(sql).rows(values).first, row[0].integer != excluding else { return false }
        var stale = row[3].integer != 0
        if !stale {
            do { _ = try openRow(itemClass, row, withSecret: true) } catch where error.code == .decode { stale = true }
        }
        guard stale, let holder = row[0].integer else { return false }
        try connection.prepare("DELETE FROM \(itemClass.rawValue) WHERE rowid = ?").run([.integer(holder)])
        return true
    }
}
