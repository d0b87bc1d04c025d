import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// macOS's file-keychain API: several keychains, a default, a search list, and the classic
/// password functions.
@Suite(.freshKeychain())
struct FileKeychainAPITests {
    @Test("The classic flow: add a generic password, find it, change it with ModifyAttributesAndData, free the buffer")
    func classicGenericPasswordFlow() throws {
        // Store: a service and an account name, a password, in the default keychain.
        let service = "SurfWriter", account = "wsmith", password = "correct horse"
        var item: SecKeychainItem?
        var status = SecKeychainAddGenericPassword(nil, UInt32(service.utf8.count), service, UInt32(account.utf8.count), account,
                                                   UInt32(password.utf8.count), password, &item)
        #expect(status == errSecSuccess)
        #expect(item != nil)
        status = SecKeychainAddGenericPassword(nil, UInt32(service.utf8.count), service, UInt32(account.utf8.count), account,
                                               UInt32(password.utf8.count), password, nil)
        #expect(status == errSecDuplicateItem)

        // Get: the password comes back in a buffer the caller frees with SecKeychainItemFreeContent.
        var length: UInt32 = 0
        var data: UnsafeMutableRawPointer?
        var found: SecKeychainItem?
        status = SecKeychainFindGenericPassword(nil, UInt32(service.utf8.count), service, UInt32(account.utf8.count), account,
                                                &length, &data, &found)
        #expect(status == errSecSuccess)
        let buffer = try #require(data)
        #expect(String(decoding: UnsafeRawBufferPointer(start: buffer, count: Int(length)), as: UTF8.self) == password)
        #expect(SecKeychainItemFreeContent(nil, buffer) == errSecSuccess)

        // Change: a new account name and a new password on the item found.
        let newAccount = "wsmith2", newPassword = "battery staple"
        var accountBytes = Array(newAccount.utf8)
        try accountBytes.withUnsafeMutableBytes { raw in
            var attribute = SecKeychainAttribute(tag: SecItemAttr.accountItemAttr.rawValue, length: UInt32(raw.count), data: raw.baseAddress)
            try withUnsafeMutablePointer(to: &attribute) { pointer in
                var list = SecKeychainAttributeList(count: 1, attr: pointer)
                let item = try #require(found)
                #expect(SecKeychainItemModifyAttributesAndData(item, &list, UInt32(newPassword.utf8.count), newPassword) == errSecSuccess)
            }
        }
        status = SecKeychainFindGenericPassword(nil, UInt32(service.utf8.count), service, UInt32(account.utf8.count), account,
                                                nil, nil, nil)
        #expect(status == errSecItemNotFound)
        status = SecKeychainFindGenericPassword(nil, UInt32(service.utf8.count), service, UInt32(newAccount.utf8.count), newAccount,
                                                &length, &data, nil)
        #expect(status == errSecSuccess)
        #expect(String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self) == newPassword)
        #expect(SecKeychainItemFreeContent(nil, data) == errSecSuccess)

        // The same item, seen through SecItem.
        #expect(secret([K.class: kSecClassGenericPassword, K.service: service, K.account: newAccount]) == Data(newPassword))
        #expect(SecKeychainItemDelete(try #require(found)) == errSecSuccess)
        #expect(copy([K.class: kSecClassGenericPassword, K.service: service]).0 == errSecItemNotFound)
    }

    @Test("Internet passwords: added with four-character codes, found by SecItem with kSecAttrProtocol strings and back")
    func internetPasswords() throws {
        let server = "mail.example.com", account = "ann", password = "pw"
        var status = SecKeychainAddInternetPassword(nil, UInt32(server.utf8.count), server, 0, nil, UInt32(account.utf8.count), account,
                                                    0, nil, 993, .IMAPS, .default, UInt32(password.utf8.count), password, nil)
        #expect(status == errSecSuccess)
        let stored = try #require(attributes([K.class: kSecClassInternetPassword, K.server: server,
                                              kSecAttrProtocol as String: kSecAttrProtocolIMAPS]))
        #expect(stored[kSecAttrPort as String] as? NSNumber == 993)
        #expect(stored[kSecAttrAuthenticationType as String] as? String == "dflt")
        #expect(add(internetPassword(server: "web.example.com", account: "bob", [kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
                                                                                   K.data: Data("web pw")])) == errSecSuccess)
        var length: UInt32 = 0
        var data: UnsafeMutableRawPointer?
        status = SecKeychainFindInternetPassword(nil, 15, "web.example.com", 0, nil, 3, "bob", 0, nil, 0, .HTTPS, .any, &length, &data, nil)
        #expect(status == errSecSuccess)
        #expect(Data(bytes: try #require(data), count: Int(length)) == Data("web pw"))
        _ = SecKeychainItemFreeContent(nil, data)
        status = SecKeychainFindInternetPassword(nil, 15, "web.example.com", 0, nil, 3, "bob", 0, nil, 0, .FTP, .any, nil, nil, nil)
        #expect(status == errSecItemNotFound)
    }

    @Test("Attribute changes: numbers and codes are 4 bytes; a tag the class lacks is errSecNoSuchAttr")
    func modifyAttributeKinds() throws {
        var item: SecKeychainItem?
        #expect(SecKeychainAddGenericPassword(nil, 1, "s", 1, "a", 1, "p", &item) == errSecSuccess)
        let keychainItem = try #require(item)
        func modify(_ tag: SecItemAttr, _ bytes: [UInt8]) -> OSStatus {
            var copy = bytes
            return copy.withUnsafeMutableBytes { raw in
                var attribute = SecKeychainAttribute(tag: tag.rawValue, length: UInt32(raw.count), data: raw.baseAddress)
                return withUnsafeMutablePointer(to: &attribute) { pointer in
                    var list = SecKeychainAttributeList(count: 1, attr: pointer)
                    return SecKeychainItemModifyAttributesAndData(keychainItem, &list, 0, nil)
                }
            }
        }
        #expect(modify(.creatorItemAttr, withUnsafeBytes(of: UInt32(0x6B687672)) { Array($0) }) == errSecSuccess)
        #expect(modify(.labelItemAttr, Array("a label".utf8)) == errSecSuccess)
        #expect(modify(.serverItemAttr, Array("host".utf8)) == errSecNoSuchAttr)
        #expect(modify(.creatorItemAttr, [1, 2]) == errSecParam)
        #expect(modify(.creationDateItemAttr, Array("20260101000000Z".utf8)) == errSecReadOnlyAttr)
        let found = try #require(attributes(genericPassword("a", service: "s")))
        #expect(found[kSecAttrCreator as String] as? NSNumber == NSNumber(value: 0x6B687672))
        #expect(found[K.label] as? String == "a label")
        #expect(secret(genericPassword("a", service: "s")) == Data("p"))
    }

    @Test("Several keychains: the default takes adds, kSecUseKeychain picks one, queries search the search list")
    func severalKeychains() throws {
        let a = try createKeychain("alpha", password: nil)
        let b = try createKeychain("beta.keychain", password: nil)
        #expect(path(of: a) == TestHome.current!.path + "/alpha.keychain-db")
        #expect(path(of: b) == TestHome.current!.path + "/beta.keychain-db")
        #expect(SecKeychainSetDefault(a) == errSecSuccess)
        var defaultKeychain: SecKeychain?
        #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
        #expect(defaultKeychain == a)
        #expect(add(genericPassword("in default")) == errSecSuccess)
        #expect(add(genericPassword("in beta", [kSecUseKeychain as String: b])) == errSecSuccess)
        #expect(copy(genericPassword("in default", [kSecMatchSearchList as String: [a]])).0 == errSecSuccess)
        #expect(copy(genericPassword("in default", [kSecMatchSearchList as String: [b]])).0 == errSecItemNotFound)
        var list: CFArray?
        #expect(SecKeychainCopySearchList(&list) == errSecSuccess)
        let keychains = try #require(list as? [SecKeychain])
        #expect(keychains.contains(a) && keychains.contains(b))
        #expect(copy(genericPassword("in beta")).0 == errSecSuccess)
        let all = try #require(copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll, K.returnAttributes: true]).1 as? [[String: Any]])
        #expect(Set(all.compactMap { $0[K.account] as? String }) == ["in default", "in beta"])
        #expect(SecKeychainSetSearchList([b] as CFArray) == errSecSuccess)
        #expect(copy(genericPassword("in default")).0 == errSecItemNotFound)
        #expect(delete(genericPassword("in beta")) == errSecSuccess)
        #expect(SecKeychainDelete(a) == errSecSuccess)
        #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
        #expect(path(of: defaultKeychain) == TestHome.current!.keychainPath)
        #expect(!FileManager.default.fileExists(atPath: TestHome.current!.path + "/alpha.keychain-db"))
    }

    @Test("Bad input: missing keychains, duplicates, files that are not keychains, prompts that cannot be shown, small buffers")
    func badInput() throws {
        var missing: SecKeychain?
        #expect(SecKeychainOpen("/nonexistent/folder/k.keychain-db", &missing) == errSecSuccess)
        var value: SecKeychainStatus = 0
        #expect(SecKeychainGetStatus(missing, &value) == errSecNoSuchKeychain)
        #expect(unlock(missing, "pw") == errSecNoSuchKeychain)
        #expect(SecKeychainDelete(missing) == errSecNoSuchKeychain)
        _ = try createKeychain("twice", password: "pw")
        var again: SecKeychain?
        #expect(SecKeychainCreate("twice", 2, "pw", false, nil, &again) == errSecDuplicateKeychain)
        #expect(SecKeychainCreate("prompt", 0, nil, true, nil, &again) == errSecInteractionNotAllowed)
        let garbage = TestHome.current!.path + "/garbage.keychain-db"
        try Data(repeating: 0x20, count: 1000).write(to: URL(fileURLWithPath: garbage))
        var notKeychain: SecKeychain?
        #expect(SecKeychainOpen(garbage, &notKeychain) == errSecSuccess)
        #expect(unlock(notKeychain, "pw") == errSecInvalidKeychain)
        let locked = try createKeychain("ask", password: "pw")
        #expect(SecKeychainUnlock(locked, 0, nil, false) == errSecInteractionNotAllowed)
        var tiny = [CChar](repeating: 0, count: 4)
        var length = UInt32(tiny.count)
        #expect(SecKeychainGetPath(locked, &length, &tiny) == errSecBufferTooSmall)
        #expect(Int(length) == path(of: locked)!.utf8.count)
        var settings = SecKeychainSettings(version: 7, lockOnSleep: false, useLockInterval: false, lockInterval: 0)
        #expect(SecKeychainSetSettings(locked, &settings) == errSecParam)
        #expect(SecKeychainSetSearchList(["not a keychain"] as CFArray) == errSecParam)
        #expect(copy(genericPassword([kSecMatchSearchList as String: "nope"])).0 == errSecParam)
        #expect(add(genericPassword([kSecUseKeychain as String: "nope"])) == errSecParam)
    }

    @Test("An empty password makes a keychain without one; user interaction is recorded")
    func emptyPasswordAndInteraction() throws {
        let keychain = try createKeychain("empty", password: "")
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        #expect(status(keychain).map { $0 & kSecUnlockStateStatus } == kSecUnlockStateStatus)
        #expect(SecKeychainSetUserInteractionAllowed(false) == errSecSuccess)
        var allowed: DarwinBoolean = true
        #expect(SecKeychainGetUserInteractionAllowed(&allowed) == errSecSuccess)
        #expect(allowed.boolValue == false)
        #expect(SecKeychainSetUserInteractionAllowed(true) == errSecSuccess)
    }

    @Test("Keychain files get the same protection as the default one: 0600")
    func permissionsOfNewKeychains() throws {
        let keychain = try createKeychain("perm", password: "pw")
        let mode = try FileManager.default.attributesOfItem(atPath: path(of: keychain)!)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
