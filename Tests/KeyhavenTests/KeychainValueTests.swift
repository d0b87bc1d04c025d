import Foundation
import Keyhaven
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// The dictionary-style API, FXKeychain's shape.
@Suite(.freshKeychain())
struct KeychainValueTests {
    let keychain = Keychain(service: "com.example.values")

    @Test("Strings, data and Codable values round-trip; a missing key reads as nil")
    func roundTrips() throws {
        struct Settings: Codable, Equatable { var retries: Int; var hosts: [String]; var since: Date }
        let settings = Settings(retries: 3, hosts: ["a", "b"], since: Date(timeIntervalSince1970: 1_700_000_000))
        try keychain.set("s3cret ✓", forKey: "string")
        try keychain.set(Data([0, 1, 255]), forKey: "data")
        try keychain.set(settings, forKey: "settings")
        try keychain.set(42, forKey: "number")
        try keychain.set(true, forKey: "flag")
        #expect(try keychain.string(forKey: "string") == "s3cret ✓")
        #expect(try keychain.data(forKey: "data") == Data([0, 1, 255]))
        #expect(try keychain.value(Settings.self, forKey: "settings") == settings)
        #expect(try keychain.value(Int.self, forKey: "number") == 42)
        #expect(try keychain.value(Bool.self, forKey: "flag") == true)
        #expect(try keychain.string(forKey: "missing") == nil)
        #expect(try keychain.value(Int.self, forKey: "missing") == nil)
    }

    @Test("A value of the wrong shape is a decode error, never garbage")
    func wrongShape() throws {
        try keychain.set(["a": 1], forKey: "dictionary")
        expectError(.decode) { _ = try keychain.value(Int.self, forKey: "dictionary") }
        try keychain.set("not a property list", forKey: "text")
        expectError(.decode) { _ = try keychain.value([String].self, forKey: "text") }
        try keychain.set(Data([0xFF, 0xFE]), forKey: "binary")
        expectError(.decode) { _ = try keychain.string(forKey: "binary") }
    }

    @Test("set overwrites by updating the same item: its creation date and persistent ref stay")
    func setUpdatesInPlace() throws {
        try keychain.set("one", forKey: "k")
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: keychain.service,
                                    kSecAttrAccount as String: "k", kSecReturnAttributes as String: true,
                                    kSecReturnPersistentRef as String: true]
        var before: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &before) == errSecSuccess)
        try keychain.set("two", forKey: "k")
        var after: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &after) == errSecSuccess)
        let (b, a) = (try #require(before as? [String: Any]), try #require(after as? [String: Any]))
        #expect(b[kSecValuePersistentRef as String] as? Data == a[kSecValuePersistentRef as String] as? Data)
        #expect(b[kSecAttrCreationDate as String] as? Date == a[kSecAttrCreationDate as String] as? Date)
        #expect(try keychain.string(forKey: "k") == "two")
    }

    @Test("Subscripts get, set and remove")
    func subscripts() throws {
        keychain["token"] = "abc"
        #expect(keychain["token"] == "abc")
        keychain[data: "blob"] = Data([1, 2])
        #expect(keychain[data: "blob"] == Data([1, 2]))
        keychain["token"] = nil
        #expect(keychain["token"] == nil)
        #expect(try keychain.contains("blob"))
        #expect(try !keychain.contains("token"))
    }

    @Test("allKeys in insertion order; removeValue and removeAll; removing a missing key is fine")
    func keysAndRemoval() throws {
        for key in ["zeta", "alpha", "mid"] { try keychain.set(key, forKey: key) }
        try Keychain(service: "other").set("x", forKey: "elsewhere")
        #expect(try keychain.allKeys() == ["zeta", "alpha", "mid"])
        try keychain.removeValue(forKey: "alpha")
        try keychain.removeValue(forKey: "alpha")
        #expect(try keychain.allKeys() == ["zeta", "mid"])
        try keychain.removeAll()
        #expect(try keychain.allKeys() == [])
        #expect(try Keychain(service: "other").string(forKey: "elsewhere") == "x")
        try keychain.removeAll()
    }

    @Test("Configuration by copy: accessibility, label and comment are written; the original is unchanged")
    func configuration() throws {
        let configured = keychain.accessibility(.afterFirstUnlockThisDeviceOnly).label("My label").comment("note")
        try configured.set("v", forKey: "k")
        let found = try #require(try Keychain.accounts(forService: keychain.service).first)
        #expect(found.accessibility == .afterFirstUnlockThisDeviceOnly)
        #expect(found.label == "My label")
        #expect(keychain.accessibilityValue == .whenUnlocked && keychain.labelValue == nil)
        var raw: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "k",
                                    kSecReturnAttributes as String: true]
        #expect(SecItemCopyMatching(query as CFDictionary, &raw) == errSecSuccess)
        #expect((raw as? [String: Any])?[kSecAttrComment as String] as? String == "note")
    }

    @Test("A synchronizable copy and a local copy of a key are two items; moving one between them is one call")
    func synchronizableCopies() throws {
        let synced = keychain.synchronizable(true)
        try keychain.set("local", forKey: "k")
        try synced.set("synced", forKey: "k")
        #expect(try keychain.string(forKey: "k") == "local")
        #expect(try synced.string(forKey: "k") == "synced")
        expectError(.duplicateItem) { _ = try keychain.moveItem(forKey: "k", toSynchronizable: true) }
        #expect(try keychain.string(forKey: "k") == "local")
        try synced.removeValue(forKey: "k")
        try keychain.moveItem(forKey: "k", toSynchronizable: true)
        #expect(try keychain.string(forKey: "k") == nil)
        #expect(try synced.string(forKey: "k") == "local")
        try keychain.synchronizable(false).moveItem(forKey: "k", toSynchronizable: false)
        #expect(try keychain.string(forKey: "k") == "local")
        expectError(.itemNotFound) { _ = try keychain.moveItem(forKey: "nothing", toSynchronizable: true) }
    }

    @Test("An access group confines the keychain; an ungranted one is missingEntitlement")
    func accessGroups() throws {
        let shared = Keychain(service: "svc", accessGroup: "test.group.b")
        try shared.set("in b", forKey: "k")
        #expect(try Keychain(service: "svc", accessGroup: "test.group.a").string(forKey: "k") == nil)
        #expect(try Keychain(service: "svc").string(forKey: "k") == "in b")
        expectError(.missingEntitlement) { _ = try Keychain(service: "svc", accessGroup: "nope").set("x", forKey: "k") }
    }

    @Test("Keychain.default uses the executable's name when there is no bundle identifier")
    func defaultKeychain() throws {
        #expect(Keychain.default.service == (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName))
        try Keychain.default.set("v", forKey: "k")
        #expect(try Keychain.default.string(forKey: "k") == "v")
    }

    @Test("Many threads at once on one Keychain value")
    func concurrency() throws {
        let keychain = self.keychain
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            for i in 0..<20 { try? keychain.set("\(thread)-\(i)", forKey: "key-\(thread)") }
        }
        for thread in 0..<16 { #expect(try keychain.string(forKey: "key-\(thread)") == "\(thread)-19") }
        #expect(try keychain.allKeys().count == 16)
    }
}
