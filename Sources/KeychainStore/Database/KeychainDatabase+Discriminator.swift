import FoundationEssentials

/// Apple's uniqueness beside the Secret Service's: generic passwords that share a service and
/// account may coexist when the Secret Service made them (each with its own discriminator,
/// ``SecretServiceAttributes/discriminatorName``), but an item without one, the only kind the
/// keychain API makes, is a duplicate of any live item with its key, as `SecItemAdd` and
/// `SecItemUpdate` find it on Apple's platforms (docs/secret-service.md, "Items").
extension KeychainDatabase.Session {
    /// Throws `.duplicateItem` when `attributes` has no discriminator and a live item other than
    /// `rowID` has its primary key with one. (Without either, the UNIQUE constraint decides.)
    /// `columns` are the row's search-column values in schema order, when the caller has them
    /// already (an add has hashed them all): otherwise the key's are hashed here.
    func checkKeyFree(_ itemClass: ItemClass, attributes: [String: AttributeValue], columns: [SQLiteValue]? = nil,
                      excluding rowID: Int64?) throws(StoreError) {
        let name = SecretServiceAttributes.discriminatorName
        guard itemClass == .genericPassword, attributes[name]?.comparableBytes.isEmpty ?? true else { return }
        let schema = itemClass.schema.attributes
        let key = schema.indices.filter { schema[$0].isPrimaryKey && schema[$0].name != name }
        let sql = "SELECT rowid FROM genp WHERE tomb = 0 AND \(KeychainSchema.discriminatorColumn) != X'' AND "
            + key.map { "\(schema[$0].column) = ?" }.joined(separator: " AND ")
        let values: [SQLiteValue]
        if let columns {
            values = key.map { columns[$0] }
        } else {
            values = try key.map { (index) throws(StoreError) -> SQLiteValue in
                guard let value = Self.effectiveValue(schema[index], in: attributes) else { return .null }
                return .blob(try indexHash(itemClass, schema[index], value))
            }
        }
        let statement = try connection.prepare(sql)
        guard try statement.rows(values).contains(where: { $0.first?.integer != rowID }) else { return }
        throw StoreError(.duplicateItem, "an item with the same primary key already exists")
    }

    /// Whether a rewrite changes any column of the primary key.
    static func changesKey(_ itemClass: ItemClass, from old: [String: AttributeValue], to new: [String: AttributeValue]) -> Bool {
        itemClass.schema.primaryKey.contains { attribute in
            switch (effectiveValue(attribute, in: old), effectiveValue(attribute, in: new)) {
            case (nil, nil): return false
            case (let a?, let b?): return !a.matches(b, as: attribute.kind)
            default: return true
            }
        }
    }
}
