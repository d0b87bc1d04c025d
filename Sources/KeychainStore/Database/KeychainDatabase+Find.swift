import FoundationEssentials

/// Selecting items: SQL on the keyed-hash columns, then decryption and an exact re-check of
/// every criterion on the decrypted attributes (so a tampered search column can never make a
/// query return an item that does not match).
extension KeychainDatabase {
    /// `SecItemCopyMatching`: the matching items in insertion order, at most `query.limit`.
    package func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool) throws(StoreError) -> [StoredItem] {
        try withSession { session throws(StoreError) in
            try session.connection.transaction(immediate: false) { () throws(StoreError) -> [StoredItem] in
                let groups = try session.readableGroups(query, caller: caller, forWriting: false)
                let matches = try session.select(query, groups: groups, caller: caller, withSecrets: withSecrets)
                return try matches.liveItems()
            }
        }
    }
}

/// One row a query selected: a readable item, or a row that failed to decrypt.
enum RowMatch {
    case item(StoredItem)
    case corrupt(rowID: Int64)
}

extension [RowMatch] {
    /// The readable items; none but a corrupt match is `.decode`, no match at all `.itemNotFound`.
    func liveItems() throws(StoreError) -> [StoredItem] {
        let items = compactMap { if case .item(let item) = $0 { item } else { nil } }
        if items.isEmpty {
            if isEmpty { throw StoreError(.itemNotFound, "no item matched") }
            throw StoreError(.decode, "the matching item is damaged and cannot be decrypted")
        }
        return items
    }
}

extension KeychainDatabase.Session {
    /// Checks the caller's right to the query's access group; returns the groups to filter by
    /// (nil: no filter, either because the query names its group or the caller is unrestricted).
    func readableGroups(_ query: ItemQuery, caller: Caller, forWriting: Bool) throws(StoreError) -> [String]? {
        let groups = forWriting ? caller.writableGroups : caller.accessGroups
        guard !caller.accessGroups.isEmpty, !groups.isEmpty else {
            throw StoreError(.missingEntitlement, "the caller has no access groups")
        }
        if let explicit = query.criteria[.accessGroup] {
            guard caller.isUnrestricted || groups.contains(where: { AttributeValue.string($0) == explicit }) else {
                throw StoreError(.missingEntitlement, "the caller may not use the access group it named")
            }
            return nil
        }
        return caller.isUnrestricted ? nil : groups
    }

    /// Attributes whose index narrows a search the most, best first: an account or a server
    /// names few items, a service may name thousands. Without statistics SQLite's planner picks
    /// among equally constrained indexes arbitrarily (it chose the service's, reading every item
    /// of a service to find one account), and statistics would have to be kept up to date.
    static let indexPreference = [AttributeName.account.code, AttributeName.server.code, AttributeName.service.code, AttributeName.sha1.code, AttributeName.alias.code, AttributeName.path.code, AttributeName.securityDomain.code, AttributeName.authenticationType.code, AttributeName.type.code, AttributeName.port.code, AttributeName.protocol.code]

    /// `INDEXED BY` the most selective indexed attribute among the criteria, if any; none when
    /// a persistent reference (unique) names the item.
    static func indexHint(_ itemClass: ItemClass, criteria: [String: AttributeValue], byReference: Bool) -> String {
        guard !byReference,
              let name = indexPreference.first(where: { criteria[$0] != nil && itemClass.schema[$0]?.isIndexed == true }) else { return "" }
        return " INDEXED BY \(itemClass.rawValue)_\(name)"
    }

    /// Runs the query and decrypts what it finds, row by row; stops once `query.limit` items are
    /// readable, so a limited query never reads more rows than it needs.
    func select(_ query: ItemQuery, groups: [String]?, caller: Caller, withSecrets: Bool) throws(StoreError) -> [RowMatch] {
        let itemClass = query.itemClass
        if let reference = query.persistentReference, reference.itemClass != itemClass { return [] }
        if query.limit == 0 { return [] }
        let selection = try self.selection(query, groups: groups)
        let (criteria, wanted) = (selection.criteria, selection.lookupAttributes)
        // The SQL depends on the class, the criteria's names, the kind of reference (0 none,
        // 1 persistent identity, 2 row id), the number of groups and of lookup attributes.
        let shape = StatementShape(table: itemClass.rawValue, names: selection.names,
                                   numbers: [Int(selection.reference), selection.groups, wanted.count])
        let statement = try connection.prepare(shape: shape) { Self.selectSQL(itemClass, selection) }
        let values = selection.values
        var matches: [RowMatch] = []
        var readable = 0
        try statement.forEachRow(values) { (row) throws(StoreError) -> Bool in
            if let limit = query.limit, readable >= limit { return false }
            let item: StoredItem
            do throws(StoreError) {
                item = try openRow(itemClass, row, withSecret: withSecrets)
            } catch where error.code == .decode {
                matches.append(.corrupt(rowID: row[0].integer ?? -1))
                return true
            }
            guard Self.matches(item, criteria: criteria, query: query, caller: caller), Self.carries(item, wanted) else { return true }
            matches.append(.item(item))
            readable += 1
            return true
        }
        return matches
    }

    /// What a query selects by, before any decryption: its criteria (with the default `sync`),
    /// the statement's shape and the values it binds, in the order of ``selectSQL(_:_:columns:)``'s
    /// conditions.
    struct Selection {
        var criteria: [String: AttributeValue]
        var names: [String]
        /// 0 none, 1 persistent identity, 2 row id.
        var reference: UInt8 = 0
        var groups = 0
        var excludedGroups = 0
        var lookupAttributes: [String: String]
        var values: [SQLiteValue]
    }

    /// The keyed hashes a query selects by: its criteria's, its reference, the caller's groups
    /// (`groups`; nil: any), groups to leave out, and its Secret Service lookup attributes.
    func selection(_ query: ItemQuery, groups: [String]?, excluding: [String] = []) throws(StoreError) -> Selection {
        let itemClass = query.itemClass
        let schema = itemClass.schema
        var criteria = query.criteria
        if criteria[.synchronizable] == nil, !query.matchAnySynchronizable, query.persistentReference == nil {
            criteria[.synchronizable] = .number(0)
        }
        let names = criteria.keys.sorted()
        var values: [SQLiteValue] = [.integer(query.tombstone == true ? 1 : 0)]
        values.reserveCapacity(names.count + (groups?.count ?? 0) + 2)
        for name in names {
            guard let attribute = schema[name] else { throw StoreError(.noSuchAttribute, "no attribute \(name) in class \(itemClass.rawValue)") }
            values.append(.blob(try indexHash(itemClass, attribute, criteria[name]!)))
        }
        let wanted = itemClass == .genericPassword ? query.secretAttributes : [:]
        var selection = Selection(criteria: criteria, names: names, lookupAttributes: wanted, values: [])
        switch query.persistentReference {
        case .uuid(_, let id)?: selection.reference = 1; values.append(.blob(id))
        case .rowID(_, let row)?: selection.reference = 2; values.append(.integer(row))
        case nil: break
        }
        if let agrp = schema[.accessGroup] {
            for group in groups ?? [] { values.append(.blob(try indexHash(itemClass, agrp, .string(group)))) }
            for group in excluding { values.append(.blob(try indexHash(itemClass, agrp, .string(group)))) }
            selection.groups = groups?.count ?? 0
            selection.excludedGroups = excluding.count
        }
        values += try secretAttributeValues(wanted)
        selection.values = values
        return selection
    }

    /// The SQL of a selection (its names all in the class's schema).
    static func selectSQL(_ itemClass: ItemClass, _ selection: Selection,
                          columns: String = "rowid, persistref, keyclass, tomb, metadata, secret") -> String {
        let schema = itemClass.schema
        var conditions = ["tomb = ?"]
        for name in selection.names { conditions.append("\(schema[name]!.column) = ?") }
        switch selection.reference {
        case 1: conditions.append("persistref = ?")
        case 2: conditions.append("rowid = ?")
        default: break
        }
        if selection.groups > 0 {
            conditions.append("a_agrp IN (\(Array(repeating: "?", count: selection.groups).joined(separator: ", ")))")
        }
        if selection.excludedGroups > 0 {
            conditions.append("a_agrp NOT IN (\(Array(repeating: "?", count: selection.excludedGroups).joined(separator: ", ")))")
        }
        conditions += secretAttributeConditions(selection.lookupAttributes.count)
        return "SELECT \(columns) FROM \(itemClass.rawValue)"
            + indexHint(itemClass, criteria: selection.criteria, byReference: selection.reference != 0)
            + " WHERE " + conditions.joined(separator: " AND ") + " ORDER BY rowid"
    }

    /// The exact re-check on decrypted attributes.
    static func matches(_ item: StoredItem, criteria: [String: AttributeValue], query: ItemQuery, caller: Caller) -> Bool {
        let schema = item.itemClass.schema
        for (name, wanted) in criteria {
            guard let attribute = schema[name],
                  let stored = effectiveValue(attribute, in: item.attributes),
                  stored.matches(wanted, as: attribute.kind) else { return false }
        }
        if !caller.isUnrestricted {
            guard case .string(let group)? = item.attributes[.accessGroup], caller.accessGroups.contains(group) else { return false }
        }
        if let host = query.hostOrSubdomain {
            guard let server = item.attributes[.server].flatMap(\.utf8String),
                  server == host || server.hasSuffix("." + host) else { return false }
        }
        return true
    }
}

extension AttributeValue {
    /// The value as text, for string values and UTF-8 data.
    package var utf8String: String? {
        switch self {
        case .string(let s): return s
        case .data(let d): return String(validating: d, as: UTF8.self)
        default: return nil
        }
    }
}
