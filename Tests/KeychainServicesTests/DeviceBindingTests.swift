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

    @Test("A copy of the live file opens nothing on another machine, even with the password: it holds no password-only key")
    func copyToAnotherMachine() throws {
        let keychain = try populatedKeychain("travels")
        let original = path(of: keychain)!
        KeychainRegistry.shared.closeAll()  // checkpoints the WAL into the file
        let raw = try SQLiteConnection(path: original, create: false)
        #expect(Set(try raw.prepare("SELECT protection FROM keybag").rows().compactMap { $0[0].text }) == ["device", "device+password"])
        let copy = try openOnAnotherMachine(original)
        defer { setenv("KEYHAVEN_HOME", TestHome.current!.path, 1) }
        #expect(status(copy).map { $0 & kSecUnlockStateStatus } == 0)
        #expect(readIn(copy, "dk") == errSecInteractionNotAllowed)
        // No guess of the password can be tested against the file alone.
        #expect(unlock(copy, "wrong") == errSecDecode)
        #expect(unlock(copy, "secret pw") == errSecDecode)
        #expect(readIn(copy, "ak") == errSecInteractionNotAllowed)
    }

    @Test("A backup opened on another machine shows exactly the migratable items, once its password opens it")
    func backupToAnotherMachine() throws {
        let keychain = try populatedKeychain("travels")
        let backupFile = TestHome.current!.path + "/travels-backup.keychain-db"
        #expect(backUp(keychain, "secret pw", backupFile) == errSecSuccess)
        let copy = try openOnAnotherMachine(backupFile)
        defer { setenv("KEYHAVEN_HOME", TestHome.current!.path, 1) }
        #expect(status(copy).map { $0 & kSecUnlockStateStatus } == 0)
        #expect(readIn(copy, "dk") == errSecInteractionNotAllowed)
        #expect(unlock(copy, "wrong") == errSecAuthFailed)
        #expect(unlock(copy, "secret pw") == errSecSuccess)
        for (account, _) in Self.classes {
            let migratable = ["ak", "ck", "dk"].contains(account)
            #expect(readIn(copy, account) == (migratable ? errSecSuccess : errSecItemNotFound), "\(account)")
        }
        // Adopted: this machine's device key now opens dk while locked, new device-only items
        // work, and the adopted file keeps no password-only key either.
        #expect(addIn(copy, "new aku", kSecAttrAccessibleWhenUnlockedThisDeviceOnly) == errSecSuccess)
        KeychainRegistry.shared.closeAll()
        #expect(readIn(copy, "dk") == errSecSuccess)
        #expect(readIn(copy, "ak") == errSecInteractionNotAllowed)
        #expect(unlock(copy, "secret pw") == errSecSuccess)
        #expect(readIn(copy, "new aku") == errSecSuccess)
        let raw = try SQLiteConnection(path: path(of: copy)!, create: false)
        #expect(!(try raw.prepare("SELECT protection FROM keybag").rows().compactMap { $0[0].text }).contains("password"))
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
        #expect(backUp(keychain, "secret pw", destination) == errSecSuccess)
        #expect(backUp(keychain, "secret pw", destination) == errSecDuplicateKeychain)
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
        #expect(backUp(plain, "", TestHome.current!.path + "/plain-backup") == errSecParam)
    }

    @Test("Changing the password replaces the class keys: an old copy of the file and the old password open nothing written since")
    func changePasswordRekeys() throws {
        let keychain = try populatedKeychain("rekeyed")
        let file = path(of: keychain)!
        let rows = { try SQLiteConnection(path: file, create: false).prepare("SELECT keyclass, metadata, secret FROM genp ORDER BY rowid").rows() }
        let keybag = { try SQLiteConnection(path: file, create: false).prepare("SELECT keyclass, protection, wrapped FROM keybag").rows() }
        let header = { try SQLiteConnection(path: file, create: false).prepare("SELECT name, value FROM keychain").rows() }
        let (rowsBefore, keybagBefore, headerBefore) = (try rows(), try keybag(), try header())
        #expect(changePassword(keychain, from: "wrong", to: "new pw") == errSecAuthFailed)
        #expect(try rows() == rowsBefore && (try keybag()) == keybagBefore, "a failed change changed the file")
        #expect(changePassword(keychain, from: "secret pw", to: "new pw") == errSecSuccess)
        // Every row of a password-protected class is sealed anew; the Always classes' rows stay.
        for (before, after) in zip(rowsBefore, try rows()) {
            let keyClass = try #require(before[0].text)
            let protected = KeyClass(rawValue: keyClass)!.isPasswordProtected
            #expect((before[1] == after[1]) == !protected, "\(keyClass) metadata")
            #expect((before[2] == after[2]) == !protected, "\(keyClass) secret")
        }
        // The old wrapped keys and the old blobs are gone from the file and its log.
        let bytes = [file, file + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }.reduce(Data(), +)
        for row in keybagBefore where row[1].text == "device+password" {
            #expect(bytes.range(of: try #require(row[2].blob)) == nil, "an old wrapped \(row[0].text ?? "") key is still in the file")
        }
        for row in rowsBefore where KeyClass(rawValue: row[0].text!)!.isPasswordProtected {
            #expect(bytes.range(of: try #require(row[1].blob)) == nil, "an old \(row[0].text!) metadata blob is still in the file")
        }
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(unlock(keychain, "secret pw") == errSecAuthFailed)
        #expect(unlock(keychain, "new pw") == errSecSuccess)
        #expect(Self.classes.map { readIn(keychain, $0.0) } == Array(repeating: 0, count: Self.classes.count))

        // The review's attack: the old copy's keybag and header (whose MAC verifies: the same
        // index key made it) grafted into the new file, and the old password.
        KeychainRegistry.shared.closeAll()
        let raw = try SQLiteConnection(path: file, create: false)
        try raw.execute("DELETE FROM keybag; DELETE FROM keychain")
        for row in keybagBefore { try raw.prepare("INSERT INTO keybag(keyclass, protection, wrapped) VALUES (?, ?, ?)").run(row) }
        for row in headerBefore { try raw.prepare("INSERT INTO keychain(name, value) VALUES (?, ?)").run(row) }
        #expect(unlock(keychain, "secret pw") == errSecSuccess)
        for (account, _) in Self.classes where KeyClass(rawValue: account)!.isPasswordProtected {
            #expect(readIn(keychain, account) != errSecSuccess, "\(account) opened under the old keys")
        }
    }

    @Test("Another process that changes the password leaves this process locked, never writing under dead keys")
    func passwordChangedElsewhere() throws {
        let keychain = try populatedKeychain("shared")
        let file = path(of: keychain)!
        // A second process, played by a second open of the same file.
        let other = try KeychainDatabase(path: file, home: KeychainHome(path: TestHome.current!.path))
        try other.unlock(password: Array("secret pw".utf8))
        try other.changePassword(old: Array("secret pw".utf8), new: Array("other pw".utf8))
        // This process's keys are gone with the old epoch: ak needs the new password now.
        #expect(readIn(keychain, "ak") == errSecInteractionNotAllowed)
        #expect(addIn(keychain, "late ak", kSecAttrAccessibleWhenUnlocked) == errSecInteractionNotAllowed)
        #expect(readIn(keychain, "dk") == errSecSuccess)
        #expect(unlock(keychain, "secret pw") == errSecAuthFailed)
        #expect(unlock(keychain, "other pw") == errSecSuccess)
        #expect(addIn(keychain, "late ak", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
        #expect(Self.classes.map { readIn(keychain, $0.0) } == Array(repeating: 0, count: Self.classes.count))
    }

    @Test("Without the testing shortcut, the KDF is calibrated and never below the floor (N = 2^17, r = 8)")
    func calibratedKDF() throws {
        PasswordKDF.testingLogN = nil
        let keychain = try createKeychain("calibrated", password: "pw")
        let raw = try SQLiteConnection(path: path(of: keychain)!, create: false)
        let stored = try #require(try raw.prepare("SELECT value FROM keychain WHERE name = 'kdf'").rows().first?[0].blob)
        let kdf = try PasswordKDF(decoding: stored)
        #expect(kdf.logN >= PasswordKDF.floorLogN && PasswordKDF.floorLogN >= 17)
        #expect(kdf.r == 8 && kdf.p == 1 && kdf.salt.count == 16)
    }
}
