import Foundation
import KeychainModel
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// Generic passwords that share a service and account: Secret Service items coexist through
/// their discriminator (`khdc`), the keychain API's items keep Apple's uniqueness
/// (docs/secret-service.md, "Items"; docs/file-format.md).
@Suite(.freshKeychain())
struct SecretServiceDiscriminatorTests {
    let caller = Caller(accessGroups: ["g1"])
    static let name = SecretServiceAttributes.discriminatorName

    func database() throws -> KeychainDatabase { try KeychainRegistry.shared.defaultKeychain() }

    func item(_ service: String, _ label: String, discriminator: String? = nil) -> NewItem {
        var attributes: [String: AttributeValue] = ["svce": .string(service), "acct": .string("ann"), "labl": .string(label)]
        attributes[Self.name] = discriminator.map(AttributeValue.string)
        return NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data("secret of \(label)".utf8))
    }

    func labels(_ db: KeychainDatabase, service: String) throws -> [String] {
        var query = ItemQuery(itemClass: .genericPassword)
        query.limit = nil
        query.criteria = ["svce": .string(service)]
        return try db.findingNone(query, caller: caller).compactMap { $0.attributes["labl"]?.utf8String }.sorted()
    }

    func code(_ body: () throws -> Void) -> StoreError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? StoreError)?.code
        }
    }

    @Test("Items with a discriminator coexist with their namesake; one without is a duplicate of any of them")
    func coexistence() throws {
        let db = try database()
        let first = try db.add(item("mail", "first"), caller: caller)
        #expect(first.attributes[Self.name] == nil)
        _ = try db.add(item("mail", "second", discriminator: "d1"), caller: caller)
        _ = try db.add(item("mail", "third", discriminator: "d2"), caller: caller)
        #expect(try labels(db, service: "mail") == ["first", "second", "third"])
        #expect(code { _ = try db.add(item("mail", "fourth"), caller: caller) } == .duplicateItem)
        #expect(code { _ = try db.add(item("mail", "again", discriminator: "d1"), caller: caller) } == .duplicateItem)

        // With the first gone, the keychain API's add still meets the other two, as Apple's
        // SecItemAdd would meet any item with its key.
        var query = ItemQuery(itemClass: .genericPassword)
        query.persistentReference = first.persistentReference
        #expect(try db.delete(query, caller: caller, makeTombstones: false) == 1)
        #expect(code { _ = try db.add(item("mail", "fourth"), caller: caller) } == .duplicateItem)
        #expect(try labels(db, service: "mail") == ["second", "third"])
        // Another device's copy is its item as it was made there.
        _ = try db.add(item("mail", "replica"), caller: caller, isReplica: true)
        #expect(try labels(db, service: "mail") == ["replica", "second", "third"])
    }

    @Test("An update that moves an item without a discriminator onto another's key is a duplicate, and changes nothing")
    func updateOntoTakenKey() throws {
        let db = try database()
        _ = try db.add(item("mail", "coexisting", discriminator: "d1"), caller: caller)
        _ = try db.add(item("news", "plain"), caller: caller)
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["svce": .string("news")]
        var changes = ItemChanges()
        changes.attributes["svce"] = .string("mail")
        #expect(code { _ = try db.update(query, with: changes, caller: caller) } == .duplicateItem)
        #expect(try labels(db, service: "news") == ["plain"])
        // A change that keeps the key is not a move.
        var relabel = ItemChanges()
        relabel.attributes["labl"] = .string("renamed")
        #expect(try db.update(query, with: relabel, caller: caller) == 1)
        // The item with a discriminator may move onto a key another item has.
        query.criteria = ["svce": .string("mail")]
        changes.attributes["svce"] = .string("news")
        #expect(try db.update(query, with: changes, caller: caller) == 1)
        #expect(try labels(db, service: "news") == ["coexisting", "renamed"])
    }

    @Test("A file whose generic-password table predates the discriminator gains it when opened: items, row ids, lookup rows and the sequence kept")
    func tableGainsDiscriminator() throws {
        let db = try database()
        let lookup = SecretServiceAttributes(attributes: ["host": "a.example"])
        var withLookup = item("mail", "first")
        withLookup.attributes[SecretServiceAttributes.attributeName] = lookup.attributeValue
        let first = try db.add(withLookup, caller: caller)
        let second = try db.add(item("news", "second"), caller: caller)
        var query = ItemQuery(itemClass: .genericPassword)
        query.persistentReference = second.persistentReference
        #expect(try db.delete(query, caller: caller, makeTombstones: false) == 1)
        KeychainRegistry.shared.closeAll()

        // Make the table as a build before the discriminator made it.
        let path = TestHome.current!.keychainPath
        do {
            let connection = try SQLiteConnection(path: path, create: false)
            let statement = try connection.prepare("SELECT sql FROM sqlite_master WHERE name = 'genp'")
            let sql = try #require(statement.rows().first?.first?.text)
            let column = KeychainSchema.discriminatorColumn
            let old = sql.replacingOccurrences(of: ", \(column) BLOB", with: "").replacingOccurrences(of: ", \(column))", with: ")")
                .replacingOccurrences(of: "CREATE TABLE IF NOT EXISTS genp(", with: "CREATE TABLE genp_old(")
                .replacingOccurrences(of: "CREATE TABLE genp(", with: "CREATE TABLE genp_old(")
            #expect(!old.contains(column))
            let names = try connection.prepare("SELECT name FROM pragma_table_info('genp')").rows().compactMap { $0.first?.text }
                .filter { $0 != column }.joined(separator: ", ")
            let sequence = try #require(connection.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'genp'").rows().first?.first?.integer)
            try connection.execute("BEGIN")
            try connection.execute(old)
            try connection.execute("INSERT INTO genp_old(\(names)) SELECT \(names) FROM genp")
            try connection.execute("DROP TABLE genp")
            try connection.execute("ALTER TABLE genp_old RENAME TO genp")
            try connection.execute("DELETE FROM sqlite_sequence WHERE name = 'genp'")
            try connection.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('genp', \(sequence))")
            for statement in KeychainSchema.classTables() where !statement.contains(column) { try connection.execute(statement) }
            try connection.execute("COMMIT")
            let columns = try connection.prepare("SELECT name FROM pragma_table_info('genp')").rows().compactMap { $0.first?.text }
            #expect(!columns.contains(column))
        }

        let reopened = try database()
        #expect(try labels(reopened, service: "mail") == ["first"])
        var search = ItemQuery(itemClass: .genericPassword)
        search.secretAttributes = ["host": "a.example"]
        #expect(try reopened.find(search, caller: caller, withSecrets: true).map(\.persistentReference) == [first.persistentReference])
        let beside = try reopened.add(item("mail", "beside", discriminator: "d1"), caller: caller)
        #expect(beside.rowID > second.rowID, "a deleted item's row id came back")
        #expect(code { _ = try reopened.add(item("mail", "duplicate"), caller: caller) } == .duplicateItem)
        let connection = try SQLiteConnection(path: path, create: false)
        let columns = try connection.prepare("SELECT name FROM pragma_table_info('genp')").rows().compactMap { $0.first?.text }
        #expect(columns.contains(KeychainSchema.discriminatorColumn))
        let triggers = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'genp_ssattr_gone'").rows()
        #expect(triggers.first?.first?.integer == 1)
    }
}
