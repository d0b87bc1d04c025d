import Crypto
import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// The engine's typed API, below the Apple mirror.
@Suite(.freshKeychain())
struct KeychainDatabaseTests {
    let caller = Caller(accessGroups: ["g1", "g2"])

    func database() throws -> KeychainDatabase { try KeychainRegistry.shared.defaultKeychain() }

    @Test("Add applies Apple's defaults")
    func defaults() throws {
        let item = try database().add(NewItem(itemClass: .internetPassword, attributes: [:], secret: nil), caller: caller)
        #expect(item.attributes["agrp"] == .string("g1"))
        #expect(item.attributes["pdmn"] == .string("ak"))
        #expect(item.attributes["sync"] == .number(0))
        #expect(item.attributes["acct"] == .string(""))
        #expect(item.attributes["ptcl"] == .number(0))
        #expect(item.attributes["port"] == .number(0))
        #expect(item.attributes["vwht"] == nil)
        #expect(item.attributes["sha1"].map { if case .data(let d) = $0 { d.count } else { 0 } } == 20)
        #expect(item.attributes["cdat"] == item.attributes["mdat"])
    }

    @Test("A search uses the most selective index among its criteria: account before service; none for a persistent reference")
    func indexChoice() throws {
        let account = AttributeValue.string("a"), service = AttributeValue.string("s")
        #expect(KeychainDatabase.Session.indexHint(.genericPassword, criteria: ["svce": service, "acct": account, "sync": .number(0)],
                                                   byReference: false) == " INDEXED BY genp_acct")
        #expect(KeychainDatabase.Session.indexHint(.genericPassword, criteria: ["svce": service, "sync": .number(0)], byReference: false)
                == " INDEXED BY genp_svce")
        #expect(KeychainDatabase.Session.indexHint(.internetPassword, criteria: ["srvr": service, "port": .number(1)], byReference: false)
                == " INDEXED BY inet_srvr")
        #expect(KeychainDatabase.Session.indexHint(.genericPassword, criteria: ["acct": account], byReference: true) == "")
        #expect(KeychainDatabase.Session.indexHint(.genericPassword, criteria: ["labl": account], byReference: false) == "")
        // And the plan SQLite makes with it reads the account's index, not the service's.
        let db = try database()
        for i in 0..<20 {
            _ = try db.add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string("a\(i)"), "svce": service], secret: nil),
                           caller: caller)
        }
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string("a7"), "svce": service]
        #expect(try db.find(query, caller: caller, withSecrets: false).count == 1)
        let plan = try SQLiteConnection(path: TestHome.current!.keychainPath, create: false)
            .prepare("EXPLAIN QUERY PLAN SELECT rowid FROM genp INDEXED BY genp_acct WHERE a_acct = ? AND a_svce = ?").rows([.null, .null])
        #expect(plan.contains { $0.last?.text?.contains("genp_acct") == true })
    }

    @Test("The keyed hashes differ between keychains (a per-keychain index key)")
    func indexKeyPerKeychain() throws {
        _ = try database().add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string("same")], secret: nil), caller: caller)
        let first = try SQLiteConnection(path: TestHome.current!.keychainPath, create: false)
            .prepare("SELECT a_acct FROM genp").rows()[0][0]
        let other = try TemporaryFolder.make(prefix: "keyhaven-other")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let home = KeychainHome(path: other)
        let second = try KeychainRegistry().database(at: home.defaultKeychainPath, home: home, create: true)
        _ = try second.add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string("same")], secret: nil), caller: caller)
        let hash = try SQLiteConnection(path: home.defaultKeychainPath, create: false).prepare("SELECT a_acct FROM genp").rows()[0][0]
        #expect(first != hash)
    }

    @Test("A remembered keyed hash is the HMAC's own first 16 bytes, for every input, past the memory's capacity too")
    func indexHasherRemembers() throws {
        let key = SymmetricKey(size: .bits256)
        let hasher = IndexHasher(key: key)
        let inputs = (0..<5_000).map { Array("genp\u{0}acct\u{0}account-\($0)".utf8) } + [[], [0], [0, 0]]
        func direct(_ input: [UInt8]) -> Data { Data(HMAC<SHA256>.authenticationCode(for: input, using: key).prefix(16)) }
        // Twice over: the first pass fills the memory (and drops it once past 4,096), the second reads it.
        for _ in 0..<2 {
            for input in inputs { #expect(hasher.hash(input) == direct(input)) }
        }
        #expect(Set(inputs.map { hasher.hash($0) }).count == inputs.count)
    }

    @Test("Queries of different shapes, alternating, each get their own statement and their own answer")
    func statementShapes() throws {
        let db = try database()
        for (account, service) in [("a", "s1"), ("b", "s1"), ("a", "s2")] {
            _ = try db.add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string(account), "svce": .string(service)],
                                   secret: Data("\(account)/\(service)".utf8)), caller: caller)
        }
        let stored = try { () throws(StoreError) in
            var query = ItemQuery(itemClass: .genericPassword)
            query.limit = nil
            return try db.find(query, caller: caller, withSecrets: false)
        }()
        func secrets(_ criteria: [String: AttributeValue], reference: PersistentReference? = nil, caller: Caller? = nil) throws -> [String] {
            var query = ItemQuery(itemClass: .genericPassword)
            query.criteria = criteria
            query.persistentReference = reference
            query.limit = nil
            let found: [StoredItem]
            do throws(StoreError) {
                found = try db.find(query, caller: caller ?? self.caller, withSecrets: true)
            } catch {
                guard error.code == .itemNotFound else { throw error }
                return []
            }
            return found.map { String(decoding: $0.secret ?? Data(), as: UTF8.self) }
        }
        for _ in 0..<3 {
            #expect(try secrets(["acct": .string("a")]) == ["a/s1", "a/s2"])
            #expect(try secrets(["acct": .string("a"), "svce": .string("s2")]) == ["a/s2"])
            #expect(try secrets(["svce": .string("s1")]) == ["a/s1", "b/s1"])
            #expect(try secrets([:], reference: stored[1].persistentReference) == ["b/s1"])
            #expect(try secrets(["acct": .string("b")], reference: stored[0].persistentReference) == [])
            // One group filters differently from two.
            #expect(try secrets(["acct": .string("a")], caller: Caller(accessGroups: ["g2"])) == [])
            #expect(try secrets(["acct": .string("a")], caller: Caller(accessGroups: ["g2", "g1"])) == ["a/s1", "a/s2"])
        }
    }

    @Test("Queries of ever new shapes keep a bounded number of prepared statements, and still answer right")
    func statementCacheIsBounded() throws {
        let db = try database()
        let names = ["acct", "svce", "labl", "desc", "icmt", "gena", "crtr", "alis", "type"]
        var attributes: [String: AttributeValue] = [:]
        for name in names { attributes[name] = name == "type" || name == "crtr" ? .number(7) : .string("v") }
        _ = try db.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: nil), caller: caller)
        for mask in 1..<(1 << names.count) {
            var query = ItemQuery(itemClass: .genericPassword)
            for (bit, name) in names.enumerated() where mask & (1 << bit) != 0 { query.criteria[name] = attributes[name] }
            #expect(try db.find(query, caller: caller, withSecrets: false).count == 1, "criteria \(query.criteria.keys.sorted())")
        }
        let held = try db.withSession { (session: inout KeychainDatabase.Session) throws(StoreError) in session.connection.cachedStatements }
        #expect(held <= 2 * SQLiteConnection.cacheLimit)
    }

    @Test("An update writes only the search columns whose values change, and the item stays findable by each")
    func updateWritesChangedColumns() throws {
        let db = try database()
        _ = try db.add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string("a"), "svce": .string("s"), "labl": .string("l")],
                               secret: Data("one".utf8)), caller: caller)
        func columns() throws -> [String: SQLiteValue] {
            let statement = try SQLiteConnection(path: TestHome.current!.keychainPath, create: false).prepare("SELECT * FROM genp")
            return Dictionary(uniqueKeysWithValues: zip(statement.columnNames, try statement.rows()[0]))
        }
        func find(_ criteria: [String: AttributeValue]) throws -> Data? {
            var query = ItemQuery(itemClass: .genericPassword)
            query.criteria = criteria
            return try db.find(query, caller: caller, withSecrets: true).first?.secret
        }
        let before = try columns()
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string("a")]
        var changes = ItemChanges()
        changes.secret = Data("two".utf8)
        #expect(try db.update(query, with: changes, caller: caller) == 1)
        let after = try columns()
        let changed = Set(before.keys.filter { before[$0] != after[$0] })
        #expect(changed == ["metadata", "secret", "a_mdat", "a_sha1"])
        // And only those (with the blobs' companions) were assigned: an assigned column makes
        // SQLite rewrite its index entries even when the value stays.
        let updates = try db.withSession { (session: inout KeychainDatabase.Session) throws(StoreError) in
            session.connection.cachedSQL.filter { $0.hasPrefix("UPDATE genp") }
        }
        #expect(updates == ["UPDATE genp SET keyclass = ?, tomb = ?, metadata = ?, secret = ?, a_mdat = ?, a_sha1 = ? WHERE rowid = ?"])
        #expect(try find(["acct": .string("a"), "svce": .string("s"), "labl": .string("l")]) == Data("two".utf8))

        changes = ItemChanges()
        changes.attributes = ["acct": .string("b")]
        #expect(try db.update(query, with: changes, caller: caller) == 1)
        let renamed = try columns()
        #expect(Set(after.keys.filter { after[$0] != renamed[$0] }) == ["metadata", "secret", "a_mdat", "a_sha1", "a_acct"])
        #expect(try find(["acct": .string("b"), "svce": .string("s")]) == Data("two".utf8))
        #expect(throws: StoreError.self) { try find(["acct": .string("a")]) }
    }

    @Test("find with a limit stops early; nil limit returns all in insertion order")
    func limits() throws {
        let db = try database()
        for name in ["c", "a", "b"] {
            _ = try db.add(NewItem(itemClass: .genericPassword, attributes: ["acct": .string(name)], secret: Data(name.utf8)), caller: caller)
        }
        var query = ItemQuery(itemClass: .genericPassword)
        query.limit = 2
        #expect(try db.find(query, caller: caller, withSecrets: false).count == 2)
        query.limit = nil
        let all = try db.find(query, caller: caller, withSecrets: true)
        #expect(all.map(\.secret) == ["c", "a", "b"].map { Data($0.utf8) })
    }

    @Test("Errors carry codes and never the values involved")
    func errorsCarryNoValues() throws {
        let db = try database()
        let item = NewItem(itemClass: .genericPassword, attributes: ["acct": .string("very-private-name")], secret: Data("pw".utf8))
        _ = try db.add(item, caller: caller)
        do {
            _ = try db.add(item, caller: caller)
            Issue.record("a duplicate was added")
        } catch {
            #expect(error.code == .duplicateItem)
            #expect(!"\(error)".contains("very-private-name"))
        }
    }
}
