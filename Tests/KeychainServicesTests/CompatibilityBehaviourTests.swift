import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// The behaviours the wrappers' own test suites rely on (keychain-swift, KeychainAccess, Valet,
/// SimpleKeychain, SwiftKeychainWrapper, Locksmith; docs/compatibility.md), one test each.
@Suite(.freshKeychain())
struct CompatibilityBehaviourTests {
    @Test("1. kSecMatchLimitAll returns items in insertion order")
    func insertionOrder() throws {
        for name in ["zulu", "alpha", "mike", "bravo"] { #expect(add(genericPassword(name)) == errSecSuccess) }
        let items = try #require(copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll,
                                       K.returnAttributes: true]).1 as? [[String: Any]])
        #expect(items.compactMap { $0[K.account] as? String } == ["zulu", "alpha", "mike", "bravo"])
    }

    @Test("2. Without kSecAttrSynchronizable only local items match; Any matches both; a Bool matches exactly")
    func synchronizableFilter() throws {
        #expect(add(genericPassword("local", [K.data: Data("l")])) == errSecSuccess)
        #expect(add(genericPassword("synced", [K.sync: true, K.data: Data("s")])) == errSecSuccess)
        func accounts(_ extra: [String: Any]) -> [String] {
            var query: [String: Any] = [K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll, K.returnAttributes: true]
            query.merge(extra) { _, new in new }
            return (copy(query).1 as? [[String: Any]])?.compactMap { $0[K.account] as? String } ?? []
        }
        #expect(accounts([:]) == ["local"])
        #expect(accounts([K.sync: kSecAttrSynchronizableAny]) == ["local", "synced"])
        #expect(accounts([K.sync: true]) == ["synced"])
        #expect(accounts([K.sync: false]) == ["local"])
        #expect(accounts([K.sync: kCFBooleanTrue!]) == ["synced"])
    }

    @Test("2b. A synchronizable ThisDeviceOnly item is stored, found with kSecAttrSynchronizableAny, and updated either way")
    func thisDeviceOnlySynchronizable() throws {
        // KeychainAccess's testAllKeys adds exactly this with try!; it succeeds on Apple's platforms.
        let accessible = kSecAttrAccessible as String
        for (index, protection) in [kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                                    kSecAttrAccessibleAlwaysThisDeviceOnly].enumerated() {
            #expect(add(genericPassword("device\(index)", [K.sync: true, accessible: protection])) == errSecSuccess, "\(protection)")
            let found = copy(genericPassword("device\(index)", [K.sync: kSecAttrSynchronizableAny, K.returnAttributes: true]))
            #expect(found.0 == errSecSuccess)
            let attributes = try #require(found.1 as? [String: Any])
            #expect((attributes[K.sync] as? NSNumber)?.boolValue == true)
            #expect(attributes[accessible] as? String == protection as String)
        }
        var error: Unmanaged<CFError>?
        let control = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [], &error))
        #expect(add(genericPassword("control", [K.sync: true, kSecAttrAccessControl as String: control])) == errSecSuccess)
        #expect(copy(genericPassword("control", [K.sync: true])).0 == errSecSuccess)
        #expect(add(genericPassword("synced", [K.sync: true, accessible: kSecAttrAccessibleAfterFirstUnlock])) == errSecSuccess)
        #expect(add(genericPassword("local", [accessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly])) == errSecSuccess)
        #expect(update(genericPassword("synced", [K.sync: true]), [accessible: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]) == errSecSuccess)
        #expect(update(genericPassword("local"), [K.sync: true, accessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly]) == errSecSuccess)
        let moved = copy(genericPassword("local", [K.sync: true, K.returnAttributes: true]))
        #expect((moved.1 as? [String: Any])?[accessible] as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)
        #expect(update(genericPassword("synced", [K.sync: true]), [accessible: kSecAttrAccessibleWhenUnlocked]) == errSecSuccess)
    }

    @Test("3. The default limit is one; delete removes every match; nothing to delete is errSecItemNotFound")
    func defaultLimitAndDeleteAll() {
        #expect(add(genericPassword("a")) == errSecSuccess)
        #expect(add(genericPassword("b")) == errSecSuccess)
        let (status, result) = copy([K.class: kSecClassGenericPassword, K.returnAttributes: true])
        #expect(status == errSecSuccess)
        #expect(result is [String: Any])
        #expect(delete([K.class: kSecClassGenericPassword]) == errSecSuccess)
        #expect(copy([K.class: kSecClassGenericPassword]).0 == errSecItemNotFound)
        #expect(delete([K.class: kSecClassGenericPassword]) == errSecItemNotFound)
    }

    @Test("4. Duplicate add is errSecDuplicateItem; accessibility is not part of the key; update of nothing is not found")
    func duplicateAndUpdateNotFound() {
        #expect(add(genericPassword([kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked])) == errSecSuccess)
        #expect(add(genericPassword([kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock])) == errSecDuplicateItem)
        #expect(update(genericPassword("nobody"), [K.data: Data("x")]) == errSecItemNotFound)
    }

    @Test("5. kSecValueData in a query is not a criterion")
    func dataInQueryIgnored() {
        #expect(add(genericPassword([K.data: Data("real")])) == errSecSuccess)
        #expect(copy(genericPassword([K.data: Data("something else")])).0 == errSecSuccess)
        #expect(delete(genericPassword([K.data: Data("something else")])) == errSecSuccess)
    }

    @Test("6. Values keep their type; numbers are NSNumber; unset attributes are absent; accessibility defaults to ak")
    func valueTypes() throws {
        let accountData = Data([0x00, 0xFF, 0x10])
        #expect(add([K.class: kSecClassGenericPassword, K.account: accountData, kSecAttrGeneric as String: Data("gen"),
                     kSecAttrCreator as String: 1234]) == errSecSuccess)
        let found = try #require(attributes([K.class: kSecClassGenericPassword, K.account: accountData]))
        #expect(found[K.account] as? Data == accountData)
        #expect(found[kSecAttrGeneric as String] as? Data == Data("gen"))
        #expect(found[kSecAttrCreator as String] as? NSNumber == 1234)
        #expect(found[K.service] as? String == "")
        #expect(found[K.label] == nil)
        #expect(found[kSecAttrComment as String] == nil)
        #expect(found[kSecAttrAccessible as String] as? String == "ak")
        #expect(copy([K.class: kSecClassGenericPassword, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]).0 == errSecSuccess)
        #expect(copy([K.class: kSecClassGenericPassword, kSecAttrAccessible as String: kSecAttrAccessibleAlways]).0 == errSecItemNotFound)
        #expect(add(genericPassword("string")) == errSecSuccess)
        #expect(attributes(genericPassword("string"))?[K.account] as? String == "string")
    }

    @Test("7. Result shapes: one key, several keys, multi-item limits, nil result pointer, empty data")
    func resultShapes() throws {
        #expect(add(genericPassword([K.data: Data()])) == errSecSuccess)
        #expect(SecItemCopyMatching(genericPassword([K.returnData: true]) as CFDictionary, nil) == errSecSuccess)
        #expect(copy(genericPassword([K.returnData: true])).1 as? Data == Data())
        #expect(copy(genericPassword([K.returnAttributes: true])).1 is [String: Any])
        let both = try #require(copy(genericPassword([K.returnAttributes: true, K.returnData: true])).1 as? [String: Any])
        #expect(both[K.data] as? Data == Data())
        #expect(copy(genericPassword([K.returnData: true, K.limit: kSecMatchLimitAll])).1 as? [Data] == [Data()])
        #expect(copy(genericPassword([K.returnData: true, K.limit: 5])).1 as? [Data] == [Data()])
        #expect(copy(genericPassword([K.returnData: true, K.limit: 1])).1 as? Data == Data())
        let (status, result) = copy(genericPassword())
        #expect(status == errSecSuccess)
        #expect(result == nil)
    }

    @Test("8. A returned persistent ref works again as kSecValuePersistentRef")
    func persistentRefRoundTrip() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        let ref = try #require(copy(genericPassword([K.returnPersistentRef: true])).1 as? Data)
        #expect(secret([K.class: kSecClassGenericPassword, K.persistentRef: ref]) == Data("pw"))
        #expect(secret([K.persistentRef: ref]) == Data("pw"))
    }

    @Test("9. kSecUse keys that wrappers pass are accepted and ignored")
    func ignoredUseKeys() {
        let keys: [String: Any] = [
            kSecUseDataProtectionKeychain as String: true,
            kSecUseAuthenticationUI as String: kSecUseAuthenticationUIAllow,
            kSecUseOperationPrompt as String: "Unlock",
            kSecUseAuthenticationContext as String: NSObject(),
        ]
        #expect(add(genericPassword(keys)) == errSecSuccess)
        #expect(copy(genericPassword(keys)).0 == errSecSuccess)
        #expect(copy(genericPassword([kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip])).0 == errSecSuccess)
        #expect(update(genericPassword(keys), [K.label: "x"]) == errSecSuccess)
        #expect(delete(genericPassword(keys)) == errSecSuccess)
    }

    @Test("10. kSecAttrAccessControl is accepted on add and in queries and deletes")
    func accessControlAccepted() throws {
        let control = try #require(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                                                                    .userPresence, nil))
        #expect(add(genericPassword([kSecAttrAccessControl as String: control, K.data: Data("pw")])) == errSecSuccess)
        let found = try #require(attributes(genericPassword([kSecAttrAccessControl as String: control])))
        #expect(found[kSecAttrAccessible as String] as? String == "aku")
        #expect(found[kSecAttrAccessControl as String] as? SecAccessControl == control)
        #expect(delete(genericPassword([kSecAttrAccessControl as String: control])) == errSecSuccess)
    }

    @Test("11. Access groups come from the configurable list (see AccessGroupTests)")
    func configurableGroups() {
        SecAccessGroupsSetCurrent(NSArray(array: ["123.my.test.group"]))
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(attributes(genericPassword())?[K.group] as? String == "123.my.test.group")
    }

    @Test("12. Sixteen threads at once: every call succeeds and nothing is lost")
    func threadSafety() throws {
        let threads = 16, perThread = 25
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<perThread {
                let account = "t\(thread)-\(i)"
                _ = add(genericPassword(account, [K.data: Data(account)]))
                _ = update(genericPassword(account), [K.label: "label \(i)"])
                _ = secret(genericPassword(account))
            }
        }
        for thread in 0..<threads {
            for i in 0..<perThread {
                let account = "t\(thread)-\(i)"
                #expect(secret(genericPassword(account)) == Data(account))
            }
        }
        let all = try #require(copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll]).1 as? [Any])
        #expect(all.isEmpty)  // no return keys: an empty array
        #expect((copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll,
                       K.returnPersistentRef: true]).1 as? [Data])?.count == threads * perThread)
    }

    @Test("13. Each test's KEYHAVEN_HOME is its own keychain")
    func isolation() throws {
        let home = try #require(TestHome.current)
        #expect(ProcessInfo.processInfo.environment["KEYHAVEN_HOME"] == home.path)
        #expect(copy([K.class: kSecClassGenericPassword]).0 == errSecItemNotFound)
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(FileManager.default.fileExists(atPath: home.keychainPath))
    }
}
