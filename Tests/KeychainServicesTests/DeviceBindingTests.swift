import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// What a keychain file is worth on another machine (another keychain home, so another device
/// key), and what backups and password changes do to the file.
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct DeviceBindingTests {
    nonisolated(unsafe) static let classes: [(String, CFString)] = [
        ("ak", kSecAttrAccessibleWhenUnlocked), ("ck", kSecAttrAccessibleAfterFirstUnlock), ("dk", kSecAttrAccessibleAlways),
        ("aku", kSecAttrAccessibleWhenUnlockedThisDeviceOnly), ("cku", kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly),
        ("dku", kSecAttrAccessibleAlwaysThisDeviceOnly), ("akpu", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly),
    ]

    /// A keychain with a password holding one item of each class, named after its class.
    func populatedKeychain(_ name: String) throws -> SecKeychain {
        let keychain = try createKeychain(name, password: "secret pw")
        for (account, accessibility) in Self.classes { #expect(addIn(keychain, account, accessibility) == errSecSuccess) }
        return keychain
    }

    /// Switches the test to a new, empty keychain home (another machine) and opens `file` there.
    func openOnAnotherMachine(_ file: String) throws -> SecKeychain {
        let otherHome = try TemporaryFolder.make(prefix: "keyhaven-other-machine")
        setenv("KEYHAVEN_HOME", otherHome, 1)
        KeychainRegistry.shared.closeAll()
        let copy = otherHome + "/copied.keychain-db"
        try FileManager.default.copyItem(atPath: file, toPath: copy)
        var keychain: SecKeychain?
        #expect(SecKeychainOpen(copy, &keychain) == errSecSuccess)
        return try #require(keychain)
    }

    @Test("A copy opened on another machine shows exactly the migratable items, once its password opens it")
    func copyToAnotherMachine() throws {
        let keychain = try populatedKeychain("travels")
        let original = path(of: keychain)!
        KeychainRegistry.shared.closeAll()  // checkpoints the WAL into the file
        let copy = try openOnAnotherMachine(original)
        defer { setenv("KEYHAVEN_HOME", TestHome.current!.path, 1) }
        #expect(status(copy).map { $0 & kSecUnlockStateStatus } == 0)
        #expect(readIn(copy, "dk") == errSecInteractionNotAllowed)
        #expect(unlock(copy, "wrong") == errSecAuthFailed)
        #expect(unlock(copy, "secret pw") == errSecSuccess)
        for (account, _) in Self.classes {
            let migratable = ["ak", "ck", "dk"].contains(account)
            #expect(readIn(copy, account) == (migratable ? errSecSuccess : errSecItemNotFound), "\(account)")
        }
        // Adopted: this machine's device key now opens dk while locked, and new device-only items work.
        #expect(addIn(copy, "new aku", kSecAttrAccessibleWhenUnlockedThisDeviceOnly) == errSecSuccess)
        KeychainRegistry.shared.closeAll()
        #expect(readIn(copy, "dk") == errSecSuccess)
        #expect(readIn(copy, "ak") == errSecInteractionNotAllowed)
        #expect(unlock(copy, "secret pw") == errSecSuccess)
        #expect(readIn(copy, "new aku") == errSecSuccess)
    }

    @Test("A copy of a keychain without a password opens nothing elsewhere (no device key there)")
    func copyWithoutPassword() throws {
        let keychain = try createKeychain("plain", password: nil)
        #expect(addIn(keychain, "dk", kSecAttrAccessibleAlways) == errSecSuccess)
        let original = path(of: keychain)!
        KeychainRegistry.shared.closeAll()
        let copy = try openOnAnotherMachine(original)
        defer { setenv("KEYHAVEN_HOME", TestHome.current!.path, 1) }
        #expect(readIn(copy, "dk") == errSecNotAvailable)
        #expect(unlock(copy, "anything") == errSecNotAvailable)
    }

    @Test("A backup holds no ThisDeviceOnly item and no device-bound key, and opens with the password")
    func backup() throws {
        let keychain = try populatedKeychain("backed-up")
        let destination = TestHome.current!.path + "/backup.keychain-db"
        #expect(SecKeychainBackup(keychain, destination) == errSecSuccess)
        #expect(SecKeychainBackup(keychain, destination) == errSecDuplicateKeychain)
        #expect((try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? Int) == 0o600)
        let raw = try SQLiteConnection(path: destination, create: false)
        #expect(try raw.prepare("SELECT keyclass FROM genp ORDER BY rowid").rows().compactMap { $0[0].text } == ["ak", "ck", "dk"])
        #expect(Set(try raw.prepare("SELECT protection FROM keybag").rows().compactMap { $0[0].text }) == ["password"])
        var restored: SecKeychain?
        #expect(SecKeychainOpen(destination, &restored) == errSecSuccess)
        let backup = try #require(restored)
        #expect(readIn(backup, "dk") == errSecInteractionNotAllowed)
        #expect(unlock(backup, "secret pw") == errSecSuccess)
        #expect(["ak", "ck", "dk"].map { readIn(backup, $0) } == [0, 0, 0])
        #expect(readIn(backup, "aku") == errSecItemNotFound)
        let plain = try createKeychain("plain", password: nil)
        #expect(SecKeychainBackup(plain, TestHome.current!.path + "/plain-backup") == errSecParam)
    }

    @Test("Changing the password re-wraps the class keys and leaves every item blob as it was")
    func changePasswordKeepsItems() throws {
        let keychain = try populatedKeychain("rekeyed")
        let file = path(of: keychain)!
        let blobs = { try SQLiteConnection(path: file, create: false).prepare("SELECT metadata, secret FROM genp ORDER BY rowid").rows() }
        let before = try blobs()
        #expect(changePassword(keychain, from: "wrong", to: "new pw") == errSecAuthFailed)
        #expect(changePassword(keychain, from: "secret pw", to: "new pw") == errSecSuccess)
        #expect(try blobs() == before)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(unlock(keychain, "secret pw") == errSecAuthFailed)
        #expect(unlock(keychain, "new pw") == errSecSuccess)
        #expect(Self.classes.map { readIn(keychain, $0.0) } == Array(repeating: 0, count: Self.classes.count))
    }

    @Test("Without the testing shortcut, the KDF is calibrated and never below the floor (N = 2^15, r = 8)")
    func calibratedKDF() throws {
        PasswordKDF.testingLogN = nil
        let keychain = try createKeychain("calibrated", password: "pw")
        let raw = try SQLiteConnection(path: path(of: keychain)!, create: false)
        let stored = try #require(try raw.prepare("SELECT value FROM keychain WHERE name = 'kdf'").rows().first?[0].blob)
        let kdf = try PasswordKDF(decoding: stored)
        #expect(kdf.logN >= PasswordKDF.floorLogN)
        #expect(kdf.r == 8 && kdf.p == 1 && kdf.salt.count == 16)
    }
}
