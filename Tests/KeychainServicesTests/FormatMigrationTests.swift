import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// Format 2 (the security review's fixes): files of format 1 migrate; the header, the lock
/// settings and each row's tombstone flag are authenticated; a file cannot ask for unbounded work.
@Suite(.freshKeychain(accessGroups: ["multi.process.group", "keyhaven"]))
struct FormatMigrationTests {
    /// Tests/Fixtures/format1-home, copied into the test's keychain home (its README says how it was made).
    func installFormat1Home() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format1-home").path
        let home = TestHome.current!.path
        try FileManager.default.createDirectory(atPath: home + "/private", withIntermediateDirectories: true)
        for file in ["login.keychain-db", "v1pw.keychain-db", "private/device.key"] {
            try FileManager.default.copyItem(atPath: fixture + "/" + file, toPath: home + "/" + file)
            chmod(home + "/" + file, 0o600)
        }
        chmod(home + "/private", 0o700)
    }

    func header(_ file: String) throws -> [String: SQLiteValue] {
        let rows = try SQLiteConnection(path: file, create: false).prepare("SELECT name, value FROM keychain").rows()
        return Dictionary(uniqueKeysWithValues: rows.map { ($0[0].text!, $0[1]) })
    }

    func protections(_ file: String) throws -> Set<String> {
        Set(try SQLiteConnection(path: file, create: false).prepare("SELECT protection FROM keybag").rows().compactMap { $0[0].text })
    }

    @Test("A format-1 keychain without a password migrates when it is opened; its items stay readable")
    func migratesWithoutPassword() throws {
        try installFormat1Home()
        let file = TestHome.current!.keychainPath
        #expect(try header(file)["format"] == .integer(1))
        #expect(secret([K.class: kSecClassGenericPassword, K.account: "plain"]) == Data("no password secret".utf8))
        let migrated = try header(file)
        #expect(migrated["format"] == .integer(2) && migrated["mac"]?.blob?.count == 32)
        #expect(try protections(file) == ["device"])
    }

    @Test("A format-1 keychain with a password works locked as before and migrates at its first unlock, keys replaced")
    func migratesAtUnlock() throws {
        try installFormat1Home()
        let file = TestHome.current!.path + "/v1pw.keychain-db"
        #expect(try protections(file).contains("password"))
        let oldRows = try SQLiteConnection(path: file, create: false).prepare("SELECT wrapped FROM keybag WHERE protection = 'password'").rows()
        var opened: SecKeychain?
        #expect(SecKeychainOpen(file, &opened) == errSecSuccess)
        let keychain = try #require(opened)
        #expect(readIn(keychain, "dk-item") == errSecSuccess)
        #expect(readIn(keychain, "ak-item") == errSecInteractionNotAllowed)
        #expect(try header(file)["format"] == .integer(1))
        #expect(unlock(keychain, "wrong") == errSecAuthFailed)
        #expect(unlock(keychain, "fixture password") == errSecSuccess)
        #expect(try header(file)["format"] == .integer(2))
        #expect(try protections(file) == ["device", "device+password"])
        for account in ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"].map({ $0 + "-item" }) {
            #expect(readIn(keychain, account) == errSecSuccess, "\(account)")
        }
        let bytes = [file, file + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }.reduce(Data(), +)
        for row in oldRows { #expect(bytes.range(of: try #require(row[0].blob)) == nil, "a password-only key is still in the file") }
        // And it keeps working after a restart of this process (a new open).
        KeychainRegistry.shared.closeAll()
        #expect(readIn(keychain, "dk-item") == errSecSuccess)
        #expect(unlock(keychain, "fixture password") == errSecSuccess)
        #expect(readIn(keychain, "akpu-item") == errSecSuccess)
    }

    @Test("Write access without the keys cannot switch off the auto-lock or change the password function: the header is authenticated")
    func headerIsAuthenticated() throws {
        let keychain = try createKeychain("guarded", password: "pw")
        var settings = SecKeychainSettings(version: SEC_KEYCHAIN_SETTINGS_VERS1, lockOnSleep: false, useLockInterval: true, lockInterval: 60)
        #expect(SecKeychainSetSettings(keychain, &settings) == errSecSuccess)
        #expect(addIn(keychain, "item", kSecAttrAccessibleAlways) == errSecSuccess)
        let file = path(of: keychain)!
        KeychainRegistry.shared.closeAll()
        let raw = try SQLiteConnection(path: file, create: false)
        let original = try #require(try header(file)["settings"]?.blob)
        try raw.prepare("UPDATE keychain SET value = ? WHERE name = 'settings'").run([.blob(Data(LockSettings().encoded))])
        #expect(readIn(keychain, "item") == errSecInvalidKeychain)
        try raw.prepare("UPDATE keychain SET value = ? WHERE name = 'settings'").run([.blob(original)])
        KeychainRegistry.shared.closeAll()
        #expect(readIn(keychain, "item") == errSecSuccess)
        // Other scrypt parameters (valid ones) do not verify either.
        KeychainRegistry.shared.closeAll()
        try raw.prepare("UPDATE keychain SET value = ? WHERE name = 'kdf'").run([.blob(PasswordKDF(logN: 11).encoded)])
        #expect(readIn(keychain, "item") == errSecInvalidKeychain)
    }

    @Test("A file asking for more scrypt work than the ceiling (N = 2^30, or 1 GiB) is refused, not run")
    func kdfIsCapped() throws {
        for (logN, r) in [(30, 8), (21, 8), (20, 16), (18, 64)] as [(UInt8, UInt32)] {
            let encoded = PasswordKDF(logN: logN, r: r).encoded
            #expect(throws: StoreError.self, "logN \(logN) r \(r)") { try PasswordKDF(decoding: encoded) }
        }
        #expect(throws: Never.self) { try PasswordKDF(decoding: PasswordKDF(logN: 20, r: 8).encoded) }
    }

    @Test("A row's tombstone flag is authenticated: flipping it hides the row instead of bringing a deleted item back")
    func tombstoneIsAuthenticated() throws {
        #expect(add(genericPassword("kept")) == errSecSuccess)
        #expect(add(genericPassword("gone")) == errSecSuccess)
        #expect(delete(genericPassword("gone", [kSecUseTombstones as String: true])) == errSecSuccess)
        let file = TestHome.current!.keychainPath
        let raw = try SQLiteConnection(path: file, create: false)
        try raw.execute("UPDATE genp SET tomb = 1 - tomb")
        KeychainRegistry.shared.closeAll()
        // The tombstone posing as an item does not open (as write access can delete a row, it can
        // hide one: the item posing as a tombstone is no longer found).
        #expect(copy(genericPassword("gone", [K.returnData: true])).0 == errSecDecode)
        #expect(copy(genericPassword("kept", [K.returnData: true])).0 == errSecItemNotFound)
        try raw.execute("UPDATE genp SET tomb = 1 - tomb")
        KeychainRegistry.shared.closeAll()
        #expect(copy(genericPassword("kept", [K.returnData: true])).0 == errSecSuccess)
    }

    @Test("A format-2 file relabelled as format 1 (to escape the header's MAC) opens nothing and is not rewritten")
    func downgradeRefused() throws {
        for password in ["pw", nil] as [String?] {
            let keychain = try createKeychain("downgraded-\(password ?? "none")", password: password)
            var settings = SecKeychainSettings(version: SEC_KEYCHAIN_SETTINGS_VERS1, lockOnSleep: false, useLockInterval: true, lockInterval: 60)
            #expect(SecKeychainSetSettings(keychain, &settings) == errSecSuccess)
            #expect(addIn(keychain, "dk-item", kSecAttrAccessibleAlways) == errSecSuccess)
            #expect(addIn(keychain, "ak-item", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            let file = path(of: keychain)!
            KeychainRegistry.shared.closeAll()
            let raw = try SQLiteConnection(path: file, create: false)
            try raw.execute("UPDATE keychain SET value = 1 WHERE name = 'format'; DELETE FROM keychain WHERE name = 'mac'")
            try raw.prepare("UPDATE keychain SET value = ? WHERE name = 'settings'").run([.blob(Data(LockSettings().encoded))])
            let snapshot = { try raw.prepare("SELECT * FROM genp ORDER BY rowid").rows() + raw.prepare("SELECT * FROM keybag ORDER BY keyclass, protection").rows() + raw.prepare("SELECT * FROM keychain ORDER BY name").rows() }
            let before = try snapshot()
            #expect(readIn(keychain, "dk-item") != errSecSuccess)
            if let password { #expect(unlock(keychain, password) == errSecDecode) }
            #expect(readIn(keychain, "ak-item") != errSecSuccess)
            KeychainRegistry.shared.closeAll()
            #expect(try snapshot() == before, "the relabelled file was rewritten")
        }
    }
}

extension FormatMigrationTests {
    @Test("A keychain made before keys could be stored gains the key table when opened, and keeps its items")
    func gainsKeyTable() throws {
        try installFormat1Home()
        let file = TestHome.current!.keychainPath
        let tables = { () throws -> Set<String> in
            Set(try SQLiteConnection(path: file, create: false).prepare("SELECT name FROM sqlite_master WHERE type = 'table'").rows()
                .compactMap { $0[0].text })
        }
        #expect(try !tables().contains("keys"))
        #expect(secret([K.class: kSecClassGenericPassword, K.account: "plain"]) == Data("no password secret".utf8))
        #expect(try tables().contains("keys"))
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        #expect(SecItemAdd([kSecValueRef as String: key, kSecAttrApplicationTag as String: Data("old".utf8)] as CFDictionary, nil) == errSecSuccess)
        #expect(secret([K.class: kSecClassGenericPassword, K.account: "plain"]) == Data("no password secret".utf8))
    }
}
