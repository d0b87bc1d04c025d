import FoundationEssentials

/// The search side of Secret Service lookup attributes (``SecretServiceAttributes``): one keyed
/// hash per pair in `genp_ssattr`, written with the item, used to select before decrypting.
extension KeychainDatabase.Session {
    /// `HMAC(index key, "genp" NUL "khss" NUL name NUL value)`, first 16 bytes: the same keyed
    /// hash as the search columns, over a name no attribute of Apple's has.
    func secretAttributeHash(_ name: String, _ value: String) throws(StoreError) -> Data {
        var input = Array("genp\u{0}\(SecretServiceAttributes.attributeName)\u{0}".utf8)
        input.append(contentsOf: name.utf8)
        input.append(0)
        input.append(contentsOf: value.utf8)
        return try keys.hasher().hash(input)
    }

    /// Rewrites a row's hashes when its lookup attributes change (inside the write's transaction).
    func writeSecretAttributes(row: Int64, old: AttributeValue?, new: AttributeValue?) throws(StoreError) {
        guard old != new else { return }
        if old != nil {
            try connection.prepare("DELETE FROM genp_ssattr WHERE item = ?").run([.integer(row)])
        }
        guard let new, let attributes = SecretServiceAttributes(item: [SecretServiceAttributes.attributeName: new]) else { return }
        let insert = try connection.prepare("INSERT OR IGNORE INTO genp_ssattr(hash, item) VALUES (?, ?)")
        for (name, value) in attributes.attributes {
            try insert.run([.blob(try secretAttributeHash(name, value)), .integer(row)])
        }
    }

    /// The SQL condition for each wanted pair.
    static func secretAttributeConditions(_ count: Int) -> [String] {
        Array(repeating: "rowid IN (SELECT item FROM genp_ssattr WHERE hash = ?)", count: count)
    }

    /// The values for ``secretAttributeConditions(_:)``, in the order of the sorted names.
    func secretAttributeValues(_ wanted: [String: String]) throws(StoreError) -> [SQLiteValue] {
        try wanted.sorted { $0.key < $1.key }.map { (pair) throws(StoreError) -> SQLiteValue in
            .blob(try secretAttributeHash(pair.key, pair.value))
        }
    }

    /// Whether a decrypted item carries every wanted pair.
    static func carries(_ item: StoredItem, _ wanted: [String: String]) -> Bool {
        guard !wanted.isEmpty else { return true }
        guard let stored = SecretServiceAttributes(item: item.attributes) else { return false }
        return wanted.allSatisfy { stored.attributes[$0.key] == $0.value }
    }
}

extension KeychainDatabase {
    /// The persistent references of the live items a query's search columns select, without
    /// decrypting anything: what a locked keychain can tell (the index key opens with the device
    /// key). Criteria are not re-checked, so a tampered column may name a wrong item; a caller
    /// uses these only to say that locked items exist (the Secret Service's locked results).
    package func lockedMatches(_ query: ItemQuery, groups: [String]?, excluding: [String] = []) throws(StoreError) -> [PersistentReference] {
        try withSession { session throws(StoreError) in
            let itemClass = query.itemClass
            let selection = try session.selection(query, groups: groups, excluding: excluding)
            let sql = Session.selectSQL(itemClass, selection, columns: "persistref")
            return try session.connection.prepare(sql).rows(selection.values).compactMap { row in
                row.first?.blob.flatMap { $0.count == 16 ? PersistentReference.uuid(itemClass, $0) : nil }
            }
        }
    }
}
