import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// The keychain file on disk: what is (not) readable in it, and what tampering and damage do.
@Suite(.freshKeychain())
struct KeychainFileTests {
    private var home: TestHome { TestHome.current! }

    /// Every byte of the keychain's files (database, WAL, shared memory).
    private func allFileBytes() throws -> Data {
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] {
            if let data = FileManager.default.contents(atPath: home.keychainPath + suffix) { bytes.append(data) }
        }
        return bytes
    }

    /// Opens the keychain file directly, as an attacker with the file would.
    private func raw() throws -> SQLiteConnection { try SQLiteConnection(path: home.keychainPath, create: false) }

    @Test("No secret, account, service, label or group appears in the files in plaintext")
    func noPlaintext() throws {
        let needles = ["S3cr3t-Pa55w0rd-XYZ", "account-needle-QRS", "service-needle-TUV", "label-needle-WXY",
                       "group.needle.lmn", "comment-needle-OPQ", "server-needle.example.org"]
        SecAccessGroupsSetCurrent(NSArray(array: ["group.needle.lmn"]))
        #expect(add(genericPassword(needles[1], service: needles[2], [K.data: Data(needles[0]), K.label: needles[3],
                                                                     kSecAttrComment as String: needles[5]])) == errSecSuccess)
        #expect(add(internetPassword(server: needles[6], account: needles[1], [K.data: Data(needles[0])])) == errSecSuccess)
        #expect(update(genericPassword(needles[1], service: needles[2]), [K.data: Data(needles[0] + "2")]) == errSecSuccess)
        let bytes = try allFileBytes()
        #expect(bytes.count > 4096)
        for needle in needles {
            #expect(bytes.range(of: Data(needle)) == nil, "\(needle) is readable in the keychain file")
            #expect(bytes.range(of: Data(String(needle.prefix(8)))) == nil, "a prefix of \(needle) is readable")
        }
    }

    @Test("Swapping two rows' blobs makes both fail with errSecDecode, never the other's secret")
    func swappedBlobs() throws {
        #expect(add(genericPassword("one", [K.data: Data("secret one")])) == errSecSuccess)
        #expect(add(genericPassword("two", [K.data: Data("secret two")])) == errSecSuccess)
        #expect(add(genericPassword("three", [K.data: Data("secret three")])) == errSecSuccess)
        let db = try raw()
        let rows = try db.prepare("SELECT rowid, metadata, secret FROM genp ORDER BY rowid").rows()
        try db.prepare("UPDATE genp SET metadata = ?, secret = ? WHERE rowid = ?").run([rows[1][1], rows[1][2], rows[0][0]])
        try db.prepare("UPDATE genp SET metadata = ?, secret = ? WHERE rowid = ?").run([rows[0][1], rows[0][2], rows[1][0]])
        for account in ["one", "two"] {
            #expect(copy(genericPassword(account, [K.returnData: true])).0 == errSecDecode)
            #expect(copy(genericPassword(account, [K.returnAttributes: true])).0 == errSecDecode)
        }
        #expect(secret(genericPassword("three")) == Data("secret three"))
        let all = copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll, K.returnData: true])
        #expect(all.1 as? [Data] == [Data("secret three")])
    }

    @Test("Swapping only the secrets: attributes still read, data is errSecDecode")
    func swappedSecrets() throws {
        #expect(add(genericPassword("one", [K.data: Data("secret one")])) == errSecSuccess)
        #expect(add(genericPassword("two", [K.data: Data("secret two")])) == errSecSuccess)
        let db = try raw()
        let rows = try db.prepare("SELECT rowid, secret FROM genp ORDER BY rowid").rows()
        try db.prepare("UPDATE genp SET secret = ? WHERE rowid = ?").run([rows[1][1], rows[0][0]])
        try db.prepare("UPDATE genp SET secret = ? WHERE rowid = ?").run([rows[0][1], rows[1][0]])
        #expect(copy(genericPassword("one", [K.returnAttributes: true])).0 == errSecSuccess)
        #expect(copy(genericPassword("one", [K.returnData: true])).0 == errSecDecode)
        #expect(copy(genericPassword("two", [K.returnData: true])).0 == errSecDecode)
    }

    @Test("An old secret put back under newer metadata (a rollback of half a row) is errSecDecode")
    func rolledBackSecret() throws {
        #expect(add(genericPassword([K.data: Data("version 1")])) == errSecSuccess)
        let db = try raw()
        let old = try db.prepare("SELECT secret FROM genp").rows()[0][0]
        #expect(update(genericPassword(), [K.data: Data("version 2")]) == errSecSuccess)
        try db.prepare("UPDATE genp SET secret = ?").run([old])
        #expect(copy(genericPassword([K.returnData: true])).0 == errSecDecode)
    }

    @Test("Changing a row's key class or identity column is errSecDecode")
    func tamperedRowColumns() throws {
        #expect(add(genericPassword("one", [K.data: Data("x")])) == errSecSuccess)
        #expect(add(genericPassword("two", [K.data: Data("y")])) == errSecSuccess)
        let db = try raw()
        try db.prepare("UPDATE genp SET keyclass = 'dk' WHERE rowid = 1").run()
        try db.prepare("UPDATE genp SET persistref = randomblob(16) WHERE rowid = 2").run()
        #expect(copy(genericPassword("one")).0 == errSecDecode)
        #expect(copy(genericPassword("two", [K.returnAttributes: true])).0 == errSecDecode)
    }

    @Test("A search column copied from another row never returns the wrong item")
    func tamperedSearchColumn() throws {
        #expect(add(genericPassword("one", service: "s1", [K.data: Data("x")])) == errSecSuccess)
        #expect(add(genericPassword("two", service: "s2", [K.data: Data("y")])) == errSecSuccess)
        let db = try raw()
        let acct = try db.prepare("SELECT a_acct FROM genp WHERE rowid = 1").rows()[0][0]
        try db.prepare("UPDATE genp SET a_acct = ? WHERE rowid = 2").run([acct])
        let found = copy([K.class: kSecClassGenericPassword, K.account: "one", K.limit: kSecMatchLimitAll, K.returnData: true])
        #expect(found.1 as? [Data] == [Data("x")])
    }

    @Test("A damaged row can be deleted, and an add over its key replaces it")
    func recoverFromDamage() throws {
        #expect(add(genericPassword("one", [K.data: Data("x")])) == errSecSuccess)
        #expect(add(genericPassword("two", [K.data: Data("y")])) == errSecSuccess)
        let db = try raw()
        try db.prepare("UPDATE genp SET metadata = zeroblob(80) WHERE rowid = 1").run()
        try db.prepare("UPDATE genp SET metadata = zeroblob(80) WHERE rowid = 2").run()
        #expect(copy(genericPassword("one")).0 == errSecDecode)
        #expect(delete(genericPassword("one")) == errSecSuccess)
        #expect(add(genericPassword("one", [K.data: Data("fresh")])) == errSecSuccess)
        #expect(add(genericPassword("two", [K.data: Data("fresh too")])) == errSecSuccess)
        #expect(secret(genericPassword("two")) == Data("fresh too"))
    }

    /// Closes the keychain, changes its file, and returns the status of a read.
    private func reopenAfter(_ change: () throws -> Void) throws -> OSStatus {
        KeychainRegistry.shared.closeAll()
        try change()
        return copy(genericPassword([K.returnData: true])).0
    }

    @Test("A file that is not SQLite is errSecInvalidKeychain and is left as it was")
    func notAKeychain() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        let garbage = Data(repeating: 0x41, count: 4096)
        let status = try reopenAfter {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home.keychainPath + suffix) }
            try garbage.write(to: URL(fileURLWithPath: home.keychainPath))
        }
        #expect(status == errSecInvalidKeychain)
        #expect(FileManager.default.contents(atPath: home.keychainPath) == garbage)
    }

    @Test("A zero-length file is errSecInvalidKeychain, never silently a new keychain")
    func zeroLengthFile() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        let status = try reopenAfter {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home.keychainPath + suffix) }
            try Data().write(to: URL(fileURLWithPath: home.keychainPath))
        }
        #expect(status == errSecInvalidKeychain)
        #expect(add(genericPassword()) == errSecInvalidKeychain)
        #expect(FileManager.default.contents(atPath: home.keychainPath)?.count == 0)
    }

    @Test("Another SQLite database is errSecInvalidKeychain")
    func foreignDatabase() throws {
        let status = try reopenAfter {
            let db = try SQLiteConnection(path: home.keychainPath, create: true)
            try db.execute("CREATE TABLE genp(x)")
        }
        #expect(status == errSecInvalidKeychain)
    }

    @Test("A truncated file is an error, never wrong data")
    func truncatedFile() throws {
        for i in 0..<200 { #expect(add(genericPassword("acct\(i)", [K.data: Data("secret \(i)")])) == errSecSuccess) }
        let status = try reopenAfter {
            let data = try #require(FileManager.default.contents(atPath: home.keychainPath))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: home.keychainPath))
        }
        #expect([errSecDecode, errSecItemNotFound].contains(status))
        let all = copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll, K.returnAttributes: true, K.returnData: true])
        if all.0 == errSecSuccess {
            for item in all.1 as? [[String: Any]] ?? [] {
                let account = try #require(item[K.account] as? String)
                #expect(item[K.data] as? Data == Data("secret \(account.dropFirst(4))"))
            }
        } else {
            #expect([errSecDecode, errSecItemNotFound].contains(all.0))
        }
    }

    @Test("A keychain from a newer format version is errSecWrongSecVersion")
    func futureVersion() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        let status = try reopenAfter {
            try raw().prepare("UPDATE keychain SET value = 99 WHERE name = 'format'").run()
        }
        #expect(status == errSecWrongSecVersion)
    }

    @Test("A keychain whose device key is gone is errSecNotAvailable until the key is back")
    func missingDeviceKey() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        let keyPath = home.path + "/private/device.key"
        let key = try #require(FileManager.default.contents(atPath: keyPath))
        let status = try reopenAfter { try FileManager.default.removeItem(atPath: keyPath) }
        #expect(status == errSecNotAvailable)
        try key.write(to: URL(fileURLWithPath: keyPath))
        KeychainRegistry.shared.closeAll()
        #expect(secret(genericPassword()) == Data("pw"))
    }

    @Test("A different device key opens nothing (errSecDecode)")
    func otherDeviceKey() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        let status = try reopenAfter {
            try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: home.path + "/private/device.key"))
        }
        #expect(status == errSecDecode)
    }

    @Test("The home and its private folder are 0700; the keychain files and the device key 0600")
    func permissions() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(home.path) == 0o700)
        #expect(try mode(home.path + "/private") == 0o700)
        #expect(try mode(home.path + "/private/device.key") == 0o600)
        for suffix in ["", "-wal", "-shm"] { #expect(try mode(home.keychainPath + suffix) == 0o600) }
    }

    @Test("A home open to others is made private; a new home is created with its parents")
    func homeIsMadePrivate() throws {
        let parent = try TemporaryFolder.make(prefix: "keyhaven-home")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        chmod(parent, 0o755)
        let nested = parent + "/a/b/keyhaven"
        setenv("KEYHAVEN_HOME", parent, 1)
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(FileManager.default.fileExists(atPath: parent + "/login.keychain-db"))
        #expect((try FileManager.default.attributesOfItem(atPath: parent)[.posixPermissions] as? Int) == 0o700)
        setenv("KEYHAVEN_HOME", nested, 1)
        #expect(add(genericPassword()) == errSecSuccess)
        #expect((try FileManager.default.attributesOfItem(atPath: nested)[.posixPermissions] as? Int) == 0o700)
        setenv("KEYHAVEN_HOME", home.path, 1)
    }

    @Test("The integrity check passes after a mix of writes")
    func integrity() throws {
        for i in 0..<50 {
            #expect(add(genericPassword("a\(i)", [K.data: Data("\(i)")])) == errSecSuccess)
            if i % 3 == 0 { #expect(delete(genericPassword("a\(i)")) == errSecSuccess) }
            if i % 3 == 1 { #expect(update(genericPassword("a\(i)"), [K.data: Data("u\(i)")]) == errSecSuccess) }
        }
        let database = try KeychainRegistry.shared.defaultKeychain()
        #expect(try database.integrityCheck() == "ok")
    }
}

