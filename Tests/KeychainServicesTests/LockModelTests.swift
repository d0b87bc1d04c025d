import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Synchronization
import Testing

/// The lock model (ARCHITECTURE.md's table), one row per test, with a second process standing in
/// for a restart where the row needs one.
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct LockModelTests {
    /// Runs helper steps on a keychain in another process; returns their statuses.
    func inAnotherProcess(_ keychain: SecKeychain, _ steps: String...) throws -> [OSStatus] {
        let output = MultiProcessTests.finish(try MultiProcessTests.start(["script", path(of: keychain)!] + steps)).1
        return output.split(separator: " ").compactMap { OSStatus($0) }
    }

    @Test("A new keychain with a password is unlocked; lock and unlock change its status; a wrong password changes nothing")
    func statusCycle() throws {
        let keychain = try createKeychain("lock-cycle", password: "pw")
        #expect(status(keychain) == kSecUnlockStateStatus | kSecReadPermStatus | kSecWritePermStatus)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(status(keychain) == kSecReadPermStatus | kSecWritePermStatus)
        let before = FileManager.default.contents(atPath: path(of: keychain)!)
        #expect(unlock(keychain, "wrong") == errSecAuthFailed)
        #expect(unlock(keychain, "") == errSecAuthFailed)
        #expect(status(keychain) == kSecReadPermStatus | kSecWritePermStatus)
        #expect(FileManager.default.contents(atPath: path(of: keychain)!) == before)
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(status(keychain) == kSecUnlockStateStatus | kSecReadPermStatus | kSecWritePermStatus)
    }

    @Test("ak and aku items are readable and writable only while unlocked; a locked add is -25308, not -25299",
          arguments: ["ak", "aku"])
    func whenUnlocked(accessibility: String) throws {
        let keychain = try createKeychain("when-unlocked", password: "pw")
        #expect(addIn(keychain, "item", accessibility as CFString) == errSecSuccess)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecInteractionNotAllowed)
        #expect(addIn(keychain, "item", accessibility as CFString) == errSecInteractionNotAllowed)
        #expect(addIn(keychain, "other", accessibility as CFString) == errSecInteractionNotAllowed)
        let query: [String: Any] = [K.class: kSecClassGenericPassword, K.account: "item", kSecMatchSearchList as String: [keychain]]
        #expect(update(query, [K.label: "x"]) == errSecInteractionNotAllowed)
        #expect(delete(query) == errSecInteractionNotAllowed)
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecSuccess)
        #expect(readIn(keychain, "other") == errSecItemNotFound)
        #expect(try inAnotherProcess(keychain, "read:item", "unlock:pw", "read:item") == [errSecInteractionNotAllowed, 0, 0])
    }

    @Test("ck and cku items: from the first unlock until the process exits; a lock does not hide them",
          arguments: ["ck", "cku"])
    func afterFirstUnlock(accessibility: String) throws {
        let keychain = try createKeychain("after-first-unlock", password: "pw")
        #expect(addIn(keychain, "item", accessibility as CFString) == errSecSuccess)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecSuccess)
        // A new process is a reboot: nothing until the first unlock, then readable even when locked.
        #expect(try inAnotherProcess(keychain, "read:item", "unlock:pw", "lock", "read:item", "add:new:\(accessibility)")
                == [errSecInteractionNotAllowed, 0, 0, 0, 0])
        #expect(readIn(keychain, "new") == errSecSuccess)
    }

    @Test("dk and dku items are always readable, locked or not, in any process", arguments: ["dk", "dku"])
    func always(accessibility: String) throws {
        let keychain = try createKeychain("always", password: "pw")
        #expect(addIn(keychain, "item", accessibility as CFString) == errSecSuccess)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecSuccess)
        #expect(addIn(keychain, "locked add", accessibility as CFString) == errSecSuccess)
        #expect(try inAnotherProcess(keychain, "read:item", "read:locked add") == [0, 0])
    }

    @Test("akpu items need a keychain with a password, and disappear when it is removed")
    func whenPasscodeSet() throws {
        let plain = try createKeychain("no-password", password: nil)
        #expect(addIn(plain, "item", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly) == errSecNotAvailable)
        let keychain = try createKeychain("with-password", password: "pw")
        #expect(addIn(keychain, "item", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly) == errSecSuccess)
        #expect(addIn(keychain, "kept", kSecAttrAccessibleAlways) == errSecSuccess)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecInteractionNotAllowed)
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecSuccess)
        #expect(changePassword(keychain, from: "pw", to: "") == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecItemNotFound)
        #expect(readIn(keychain, "kept") == errSecSuccess)
        #expect(addIn(keychain, "item", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly) == errSecNotAvailable)
        #expect(changePassword(keychain, from: "", to: "new pw") == errSecSuccess)
        #expect(addIn(keychain, "item", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly) == errSecSuccess)
        #expect(try inAnotherProcess(keychain, "read:item", "unlock:pw", "unlock:new pw", "read:item")
                == [errSecInteractionNotAllowed, errSecAuthFailed, 0, 0])
    }

    @Test("A keychain without a password cannot be locked (a device without a passcode)")
    func noPasswordNeverLocks() throws {
        let keychain = try createKeychain("open", password: nil)
        #expect(addIn(keychain, "item") == errSecSuccess)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(status(keychain).map { $0 & kSecUnlockStateStatus } == kSecUnlockStateStatus)
        #expect(readIn(keychain, "item") == errSecSuccess)
        #expect(SecKeychainUnlock(keychain, 0, nil, false) == errSecSuccess)
        #expect(try inAnotherProcess(keychain, "read:item") == [0])
    }

    @Test("The keychain locks itself after its lock interval without a call")
    func autoLock() throws {
        let keychain = try createKeychain("auto-lock", password: "pw")
        #expect(addIn(keychain, "when unlocked") == errSecSuccess)
        #expect(addIn(keychain, "after first", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
        var settings = SecKeychainSettings(version: SEC_KEYCHAIN_SETTINGS_VERS1, lockOnSleep: false, useLockInterval: true, lockInterval: 1)
        #expect(SecKeychainSetSettings(keychain, &settings) == errSecSuccess)
        var read = SecKeychainSettings()
        #expect(SecKeychainCopySettings(keychain, &read) == errSecSuccess)
        #expect(read == settings)
        #expect(readIn(keychain, "when unlocked") == errSecSuccess)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(status(keychain).map { $0 & kSecUnlockStateStatus } == 0)
        #expect(readIn(keychain, "when unlocked") == errSecInteractionNotAllowed)
        #expect(readIn(keychain, "after first") == errSecSuccess)
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(readIn(keychain, "when unlocked") == errSecSuccess)
    }

    @Test("SecKeychainLockAll locks every open keychain")
    func lockAll() throws {
        let a = try createKeychain("a", password: "pw"), b = try createKeychain("b", password: "pw")
        #expect(addIn(a, "x") == errSecSuccess && addIn(b, "y") == errSecSuccess)
        #expect(SecKeychainLockAll() == errSecSuccess)
        #expect(readIn(a, "x") == errSecInteractionNotAllowed)
        #expect(readIn(b, "y") == errSecInteractionNotAllowed)
    }

    @Test("Locking from one thread while another reads: every read succeeds or is -25308, nothing else")
    func concurrentLockAndRead() throws {
        let keychain = try createKeychain("race", password: "pw")
        #expect(addIn(keychain, "item") == errSecSuccess)
        let unexpected = Mutex<[OSStatus]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for _ in 0..<40 {
                let status: OSStatus
                switch worker {
                case 0: status = SecKeychainLock(keychain)
                case 1: status = unlock(keychain, "pw")
                default: status = readIn(keychain, "item")
                }
                if status != errSecSuccess && status != errSecInteractionNotAllowed { unexpected.withLock { $0.append(status) } }
            }
        }
        #expect(unexpected.withLock { $0 } == [])
        #expect(unlock(keychain, "pw") == errSecSuccess)
        #expect(readIn(keychain, "item") == errSecSuccess)
    }

    @Test("The default login keychain starts without a password and can be given one later")
    func passwordForTheLoginKeychain() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        #expect(SecKeychainLock(nil) == errSecSuccess)
        #expect(secret(genericPassword()) == Data("pw"))
        #expect(changePassword(nil, from: "x", to: "login pw") == errSecAuthFailed)
        #expect(changePassword(nil, from: "", to: "login pw") == errSecSuccess)
        #expect(SecKeychainLock(nil) == errSecSuccess)
        #expect(copy(genericPassword([K.returnData: true])).0 == errSecInteractionNotAllowed)
        #expect(unlock(nil, "login pw") == errSecSuccess)
        #expect(secret(genericPassword()) == Data("pw"))
    }
}
