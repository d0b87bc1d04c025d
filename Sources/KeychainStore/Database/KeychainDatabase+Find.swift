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
        if let explicit = query.criteria["agrp"] {
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
    static let indexPreference = ["acct", "srvr", "svce", "sha1", "alis", "path", "sdmn", "atyp", "type", "port", "ptcl"]

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
        var criteria = query.criteria
        if criteria["sync"] == nil, !query.matchAnySynchronizable, query.persistentReference == nil {
            criteria["sync"] = .number(0)
        }
        let schema = itemClass.schema
        let names = criteria.keys.sorted()
        var values: [SQLiteValue] = [.integer(query.tombstone == true ? 1 : 0)]
        values.reserveCapacity(names.count + (groups?.count ?? 0) + 2)
        for name in names {
            guard let attribute = schema[name] else { throw StoreError(.noSuchAttribute, "no attribute \(name) in class \(itemClass.rawValue)") }
            values.append(.blob(try indexHash(itemClass, attribute, criteria[name]!)))
        }
        var reference: UInt8 = 0
        switch query.persistentReference {
        case .uuid(_, let id)?: reference = 1; values.append(.blob(id))
        case .rowID(_, let row)?: reference = 2; values.append(.integer(row))
        case nil: break
        }
        var groupCount = 0
        if let groups, let agrp = schema["agrp"] {
            groupCount = groups.count
            for group in groups { values.append(.blob(try indexHash(itemClass, agrp, .string(group)))) }
        }
        let wanted = itemClass == .genericPassword ? query.secretAttributes : [:]
        values += try secretAttributeValues(wanted)
        // The SQL depends on the class, the criteria's names, the kind of reference (0 none,
        // 1 persistent identity, 2 row id), the number of groups and of lookup attributes.
        let shape = StatementShape(table: itemClass.rawValue, names: names, numbers: [Int(reference), groupCount, wanted.count])
        let statement = try connection.prepare(shape: shape) {
            Self.selectSQL(itemClass, names: names, reference: reference, groups: groupCount, criteria: criteria,
                           lookupAttributes: wanted.count)
        }
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

    /// The SQL of a query on `names` (all in the class's schema).
    static func selectSQL(_ itemClass: ItemClass, names: [String], reference: UInt8, groups: Int,
                          criteria: [String: AttributeValue], lookupAttributes: Int = 0) -> String {
        let schema = itemClass.schema
        var conditions = ["tomb = ?"]
        for name in names { conditions.append("\(schema[name]!.column) = ?") }
        switch reference {
        case 1: conditions.append("persistref = ?")
        case 2: conditions.append("rowid = ?")
        default: break
        }
        if groups > 0 {
            conditions.append("a_agrp IN (\(Array(repeating: "?", count: groups).joined(separator: ", ")))")
        }
        conditions += secretAttributeConditions(lookupAttributes)
        return "SELECT rowid, persistref, keyclass, tomb, metadata, secret FROM \(itemClass.rawValue)"
            + indexHint(itemClass, criteria: criteria, byReference: reference != 0)
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
            guard case .string(let group)? = item.attributes["agrp"], caller.accessGroups.contains(group) else { return false }
        }
        if let host = query.hostOrSubdomain {
            guard let server = item.attributes["srvr"].flatMap(\.utf8String),
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
