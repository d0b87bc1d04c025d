import Foundation
import KeychainModel
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// The Secret Service's lookup attributes in the engine (docs/file-format.md, "Secret Service
/// attributes"): kept encrypted in the item, searchable through keyed hashes in `genp_ssattr`.
@Suite(.freshKeychain())
struct SecretAttributeIndexTests {
    let caller = Caller(accessGroups: ["g1"])

    func database() throws -> KeychainDatabase { try KeychainRegistry.shared.defaultKeychain() }

    func add(_ db: KeychainDatabase, service: String, _ pairs: [String: String]) throws {
        let lookup = SecretServiceAttributes(attributes: pairs)
        _ = try db.add(NewItem(itemClass: .genericPassword, attributes: ["svce": .string(service),
                                                                         SecretServiceAttributes.attributeName: lookup.attributeValue],
                               secret: Data("secret of \(service)".utf8)), caller: caller)
    }

    func find(_ db: KeychainDatabase, _ pairs: [String: String]) throws -> [String] {
        var query = ItemQuery(itemClass: .genericPassword)
        query.limit = nil
        query.secretAttributes = pairs
        return try db.findingNone(query, caller: caller).compactMap { $0.attributes["svce"]?.utf8String }.sorted()
    }

    func indexRows() throws -> Int {
        try SQLiteConnection(path: TestHome.current!.keychainPath, create: false)
            .prepare("SELECT count(*) FROM genp_ssattr").rows()[0][0].integer.map(Int.init) ?? -1
    }

    @Test("Every pair is searchable, alone or together; an update moves the hashes; a delete drops them")
    func searchUpdateDelete() throws {
        let db = try database()
        try add(db, service: "one", ["xdg:schema": "org.example.Password", "host": "a.example", "user": "ann"])
        try add(db, service: "two", ["xdg:schema": "org.example.Password", "host": "b.example"])
        #expect(try find(db, ["xdg:schema": "org.example.Password"]) == ["one", "two"])
        #expect(try find(db, ["host": "a.example", "user": "ann"]) == ["one"])
        #expect(try find(db, ["host": "a.example", "user": "bob"]) == [])
        #expect(try find(db, ["host": "c.example"]) == [])
        #expect(try indexRows() == 5)
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["svce": .string("two")]
        var changes = ItemChanges()
        changes.attributes[SecretServiceAttributes.attributeName] = SecretServiceAttributes(attributes: ["host": "c.example"]).attributeValue
        #expect(try db.update(query, with: changes, caller: caller) == 1)
        #expect(try find(db, ["host": "b.example"]) == [])
        #expect(try find(db, ["host": "c.example"]) == ["two"])
        #expect(try indexRows() == 4)
        #expect(try db.delete(query, caller: caller, makeTombstones: false) == 1)
        #expect(try indexRows() == 3)
        #expect(try find(db, ["host": "c.example"]) == [])
    }

    @Test("The file holds keyed hashes of the pairs, never their text")
    func noPlaintext() throws {
        let db = try database()
        try add(db, service: "svc", ["marker-name-7f3a": "marker-value-91bc"])

        for suffix in ["", "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: TestHome.current!.keychainPath + suffix) else { continue }
            #expect(bytes.range(of: Data("marker-name-7f3a".utf8)) == nil)
            #expect(bytes.range(of: Data("marker-value-91bc".utf8)) == nil)
        }
        let hash = try SQLiteConnection(path: TestHome.current!.keychainPath, create: false)
            .prepare("SELECT hash FROM genp_ssattr").rows()[0][0].blob
        #expect(hash?.count == 16)
    }

    @Test("A locked keychain tells which items carry the pairs, by their hashes alone")
    func lockedSearch() throws {
        let db = try database()
        try add(db, service: "guarded", ["app": "mail", "user": "zoe"])
        try add(db, service: "other", ["app": "chat"])
        try db.changePassword(old: [], new: Array("a password".utf8))
        db.lock()
        var query = ItemQuery(itemClass: .genericPassword)
        query.secretAttributes = ["app": "mail"]
        #expect(throws: StoreError.self) { try db.find(query, caller: caller, withSecrets: false) }
        #expect(try db.lockedMatches(query, groups: ["g1"]).count == 1)
        query.secretAttributes = ["app": "none"]
        #expect(try db.lockedMatches(query, groups: ["g1"]).isEmpty)
        query.secretAttributes = ["app": "mail"]
        #expect(try db.lockedMatches(query, groups: ["g2"]).isEmpty)
    }
}
