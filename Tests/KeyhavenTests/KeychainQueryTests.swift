import Foundation
import Keyhaven
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// SAMKeychain's shapes: the class functions and the query type.
@Suite(.freshKeychain())
struct KeychainQueryTests {
    @Test("The class functions set, read, list and delete passwords")
    func classFunctions() throws {
        try Keychain.setPassword("pw1", forService: "svc", account: "alice")
        try Keychain.setPasswordData(Data([9, 9]), forService: "svc", account: "bob")
        try Keychain.setPassword("pw3", forService: "other", account: "carol")
        #expect(try Keychain.password(forService: "svc", account: "alice") == "pw1")
        #expect(try Keychain.passwordData(forService: "svc", account: "bob") == Data([9, 9]))
        #expect(try Keychain.password(forService: "svc", account: "nobody") == nil)
        try Keychain.setPassword("pw1b", forService: "svc", account: "alice")
        #expect(try Keychain.password(forService: "svc", account: "alice") == "pw1b")
        #expect(try Keychain.accounts(forService: "svc").map(\.account) == ["alice", "bob"])
        #expect(try Keychain.allAccounts().map(\.service) == ["svc", "svc", "other"])
        try Keychain.deletePassword(forService: "svc", account: "alice")
        expectError(.itemNotFound) { _ = try Keychain.deletePassword(forService: "svc", account: "alice") }
        #expect(try Keychain.accounts(forService: "svc").map(\.account) == ["bob"])
    }

    @Test("KeychainItem carries the attributes: group, synchronizability, accessibility, dates")
    func itemAttributes() throws {
        var query = KeychainQuery(service: "svc", account: "dave")
        query.label = "Dave's"
        query.synchronizationMode = .yes
        query.password = "pw"
        try query.save()
        let item = try #require(try KeychainQuery(service: "svc").fetchAll().first)
        #expect(item.service == "svc" && item.account == "dave" && item.label == "Dave's")
        #expect(item.accessGroup == "test.group.a")
        #expect(item.isSynchronizable)
        #expect(item.accessibility == .whenUnlocked)
        #expect(item.creationDate != nil && item.creationDate == item.modificationDate)
    }

    @Test("Synchronization modes: .any sees both and saves local; .no and .yes see one kind")
    func synchronizationModes() throws {
        var local = KeychainQuery(service: "svc", account: "a")
        local.password = "local"
        try local.save()  // .any saves a local item
        var synced = KeychainQuery(service: "svc", account: "a")
        synced.synchronizationMode = .yes
        synced.password = "synced"
        try synced.save()
        func fetch(_ mode: SynchronizationMode) throws -> [Bool] {
            var query = KeychainQuery(service: "svc", account: "a")
            query.synchronizationMode = mode
            return try query.fetchAll().map(\.isSynchronizable)
        }
        #expect(try fetch(.any) == [false, true])
        #expect(try fetch(.no) == [false])
        #expect(try fetch(.yes) == [true])
        var read = KeychainQuery(service: "svc", account: "a")
        read.synchronizationMode = .yes
        try read.fetch()
        #expect(read.password == "synced")
        // Stored, but this keychain home takes no part in sync (SyncDeviceTests covers one that does).
        #expect(!KeychainQuery.isSynchronizationAvailable)
    }

    @Test("save without a service, an account or a password is invalidParameter; fetch of nothing is itemNotFound")
    func badQueries() throws {
        expectError(.invalidParameter) { _ = try KeychainQuery(service: "svc", account: "a").save() }
        var noAccount = KeychainQuery(service: "svc")
        noAccount.password = "x"
        expectError(.invalidParameter) { _ = try noAccount.save() }
        var missing = KeychainQuery(service: "svc", account: "nobody")
        expectError(.itemNotFound) { _ = try missing.fetch() }
        expectError(.itemNotFound) { _ = try missing.delete() }
    }

    @Test("Errors name the operation and query keys, never values; catch by code")
    func errorsCarryNoValues() throws {
        var query = KeychainQuery(service: "secret-service-name", account: "secret-account-name")
        do {
            try query.fetch()
            Issue.record("fetched something")
        } catch KeychainError.itemNotFound {
            // matched by code
        } catch {
            Issue.record("unexpected \(error)")
        }
        do {
            try query.fetch()
        } catch {
            #expect(error.status == errSecItemNotFound)
            #expect(error.operation == "SecItemCopyMatching")
            #expect(error.queryKeys == ["acct", "class", "r_Data", "svce", "sync"])
            #expect(error.message == "The specified item could not be found in the keychain.")
            #expect(!error.description.contains("secret-service-name"))
            #expect(!error.description.contains("secret-account-name"))
            #expect(error.description.contains("itemNotFound"))
        }
        query.password = "pw"
        try query.save()
    }

    @Test("Interop: what Keyhaven stores, plain SecItem reads, and the other way round")
    func interopWithSecItem() throws {
        try Keychain(service: "interop").set("from keyhaven", forKey: "k1")
        var result: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "interop",
                                    kSecAttrAccount as String: "k1", kSecReturnData as String: true]
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("from keyhaven".utf8))
        let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "interop",
                                   kSecAttrAccount as String: "k2", kSecValueData as String: Data("from SecItem".utf8)]
        #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
        #expect(try Keychain(service: "interop").string(forKey: "k2") == "from SecItem")
        #expect(try Keychain.password(forService: "interop", account: "k2") == "from SecItem")
        try Keychain(service: "interop").set(["x": 1.5], forKey: "plist")
        #expect(SecItemCopyMatching(([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "plist",
                                      kSecReturnData as String: true] as [String: Any]) as CFDictionary, &result) == errSecSuccess)
        let plist = try PropertyListSerialization.propertyList(from: try #require(result as? Data), options: [], format: nil)
        #expect((plist as? [String: Double]) == ["x": 1.5])
    }

    @Test("A locked keychain is interactionNotAllowed, and subscripts read nil")
    func lockedKeychain() throws {
        #expect(SecKeychainChangePassword(nil, 0, nil, 2, "pw") == errSecSuccess)
        let keychain = Keychain(service: "svc")
        try keychain.set("v", forKey: "k")
        #expect(SecKeychainLock(nil) == errSecSuccess)
        expectError(.interactionNotAllowed) { _ = try keychain.string(forKey: "k") }
        #expect(keychain["k"] == nil)
        #expect(SecKeychainUnlock(nil, 2, "pw", true) == errSecSuccess)
        #expect(keychain["k"] == "v")
    }
}
