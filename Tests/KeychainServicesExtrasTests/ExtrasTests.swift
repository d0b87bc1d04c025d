import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// The calls Apple has no public form of on Linux's terms: access groups a process declares,
/// a keychain's password changed or backed up, the presence reuse duration. Their effects on
/// items are the mirror's tests (KeychainServicesTests: access groups, lock model, device binding).
@Suite(.freshKeychain(accessGroups: ["first.group", "second.group"]))
struct ExtrasTests {
    func keychain(_ name: String, password: String) throws -> SecKeychain {
        var keychain: SecKeychain?
        let bytes = Array(password.utf8)
        let status = SecKeychainCreate(name, UInt32(bytes.count), bytes, false, nil, &keychain)
        try #require(status == errSecSuccess)
        return try #require(keychain)
    }

    func change(_ keychain: SecKeychain?, _ old: String, _ new: String) -> OSStatus {
        let (old, new) = (Array(old.utf8), Array(new.utf8))
        return SecKeychainChangePassword(keychain, UInt32(old.count), old, UInt32(new.count), new)
    }

    func unlock(_ keychain: SecKeychain, _ password: String) -> OSStatus {
        let bytes = Array(password.utf8)
        return SecKeychainUnlock(keychain, UInt32(bytes.count), bytes, true)
    }

    func backUp(_ keychain: SecKeychain, _ password: String, _ destination: String) -> OSStatus {
        let bytes = Array(password.utf8)
        return SecKeychainBackup(keychain, UInt32(bytes.count), bytes, destination)
    }

    @Test("The groups a process sets are its groups, in order; elements that are not strings are left out")
    func accessGroups() {
        #expect(SecAccessGroupsGetCurrent() as? [String] == ["first.group", "second.group"])
        SecAccessGroupsSetCurrent(["b.group", 42, "a.group", ["nested"]] as CFArray)
        #expect(SecAccessGroupsGetCurrent() as? [String] == ["b.group", "a.group"])
        let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "grouped",
                                   kSecValueData as String: Data("x".utf8), kSecReturnAttributes as String: true]
        var result: CFTypeRef?
        #expect(SecItemAdd(item as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [String: Any])?[kSecAttrAccessGroup as String] as? String == "b.group")
    }

    @Test("A wrong old password is errSecAuthFailed and changes nothing; the new password then opens the keychain and the old does not")
    func changePassword() throws {
        let keychain = try keychain("changed", password: "old pw")
        #expect(change(keychain, "not it", "new pw") == errSecAuthFailed)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(unlock(keychain, "new pw") == errSecAuthFailed)
        #expect(unlock(keychain, "old pw") == errSecSuccess)
        #expect(change(keychain, "old pw", "new pw") == errSecSuccess)
        var status: SecKeychainStatus = 0
        #expect(SecKeychainGetStatus(keychain, &status) == errSecSuccess && status & kSecUnlockStateStatus != 0)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(unlock(keychain, "old pw") == errSecAuthFailed)
        #expect(unlock(keychain, "new pw") == errSecSuccess)
    }

    @Test("A backup needs an unlocked keychain with a password, that password, and never overwrites a file")
    func backupPreconditions() throws {
        let keychain = try keychain("saved", password: "pw")
        let home = try #require(TestHome.current).path
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(backUp(keychain, "pw", home + "/locked-backup") == errSecInteractionNotAllowed)
        #expect(!FileManager.default.fileExists(atPath: home + "/locked-backup"))
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(backUp(keychain, "not pw", home + "/guessed") == errSecAuthFailed)
        #expect(backUp(keychain, "", home + "/guessed") == errSecAuthFailed)
        #expect(!FileManager.default.fileExists(atPath: home + "/guessed"))
        #expect(FileManager.default.createFile(atPath: home + "/taken", contents: Data("mine".utf8)))
        #expect(backUp(keychain, "pw", home + "/taken") == errSecDuplicateKeychain)
        #expect(FileManager.default.contents(atPath: home + "/taken") == Data("mine".utf8))
        #expect(backUp(keychain, "pw", home + "/backup") == errSecSuccess)
        var copy: SecKeychain?
        #expect(SecKeychainOpen(home + "/backup", &copy) == errSecSuccess)
        #expect(unlock(try #require(copy), "pw") == errSecSuccess)
    }

    @Test("The presence reuse duration is clamped to 0...300 seconds; a value that is not a number is errSecParam")
    func reuseDuration() {
        defer { SecUserPresenceSetReuseDuration(0) }
        #expect(SecUserPresenceSetReuseDuration(12.9) == errSecSuccess)
        #expect(AccessGroupConfiguration.presenceReuse.withLock { $0 } == 12)
        #expect(SecUserPresenceSetReuseDuration(10_000) == errSecSuccess)
        #expect(AccessGroupConfiguration.presenceReuse.withLock { $0 } == UInt32(kSecUserPresenceMaximumReuseDuration))
        #expect(SecUserPresenceSetReuseDuration(-4) == errSecSuccess)
        #expect(AccessGroupConfiguration.presenceReuse.withLock { $0 } == 0)
        #expect(SecUserPresenceSetReuseDuration(.nan) == errSecParam)
        #expect(SecUserPresenceSetReuseDuration(.infinity) == errSecParam)
        #expect(AccessGroupConfiguration.presenceReuse.withLock { $0 } == 0)
    }
}
