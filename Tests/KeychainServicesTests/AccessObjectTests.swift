import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// macOS's access objects through the mirror (SecAccess, SecTrustedApplication, SecACL,
/// SecKeychainItemCopyAccess/SetAccess, kSecAttrAccess), in process. Enforcement is the agent's
/// (KeyhavenCLITests' AccessControlTests).
@Suite(.freshKeychain())
struct AccessObjectTests {
    private func item(_ account: String) throws -> SecKeychainItem {
        var item: SecKeychainItem?
        let status = SecKeychainFindGenericPassword(nil, 6, "access", UInt32(account.utf8.count), account, nil, nil, &item)
        #expect(status == errSecSuccess)
        return try #require(item)
    }

    /// The programs of the decrypting entry (nil: any program), and the descriptor.
    private func contents(_ access: SecAccess) throws -> (paths: [String]?, descriptor: String) {
        var list: CFArray?
        #expect(SecAccessCopyACLList(access, &list) == errSecSuccess)
        let acls = try #require(list as? [SecACL])
        #expect(acls.count == 3)
        var applications: CFArray?
        var description: CFString?
        var selector = SecKeychainPromptSelector()
        #expect(SecACLCopyContents(acls[2], &applications, &description, &selector) == errSecSuccess)
        let paths = (applications as? [SecTrustedApplication])?.map { app -> String in
            var data: CFData?
            _ = SecTrustedApplicationCopyData(app, &data)
            return String(decoding: (data as Data?) ?? Data(), as: UTF8.self)
        }
        return (paths, (description as String?) ?? "")
    }

    @Test("SecAccessCreate with trusted applications, kSecAttrAccess on SecItemAdd, SecKeychainItemCopyAccess gives them back")
    func accessRoundTrip() throws {
        var me: SecTrustedApplication?, shell: SecTrustedApplication?
        #expect(SecTrustedApplicationCreateFromPath(nil, &me) == errSecSuccess)
        #expect(SecTrustedApplicationCreateFromPath("/bin/sh", &shell) == errSecSuccess)
        var access: SecAccess?
        #expect(SecAccessCreate("Server password" as CFString, [me!, shell!] as CFArray, &access) == errSecSuccess)
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "access",
                                  kSecAttrAccount as String: "r1", kSecValueData as String: Data("x".utf8),
                                  kSecAttrAccess as String: access!]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        var copied: SecAccess?
        #expect(SecKeychainItemCopyAccess(try item("r1"), &copied) == errSecSuccess)
        let (paths, descriptor) = try contents(try #require(copied))
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        #expect(paths == [own, URL(fileURLWithPath: "/bin/sh").resolvingSymlinksInPath().path])
        #expect(descriptor == "Server password")
    }

    @Test("Without kSecAttrAccess an item trusts the program that added it; SecACLSetContents with no list and SecKeychainItemSetAccess open it, keeping its date")
    func defaultsAndSetAccess() throws {
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "access",
                                  kSecAttrAccount as String: "r2", kSecValueData as String: Data("x".utf8)]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        let ref = try item("r2")
        var access: SecAccess?
        #expect(SecKeychainItemCopyAccess(ref, &access) == errSecSuccess)
        #expect(try contents(try #require(access)).paths == [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path])
        let dateQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "r2",
                                        kSecReturnAttributes as String: true]
        var before: CFTypeRef?
        #expect(SecItemCopyMatching(dateQuery as CFDictionary, &before) == errSecSuccess)
        var list: CFArray?
        _ = SecAccessCopyACLList(access!, &list)
        for acl in try #require(list as? [SecACL]) { #expect(SecACLSetContents(acl, nil, "opened" as CFString, []) == errSecSuccess) }
        Thread.sleep(forTimeInterval: 0.01)
        #expect(SecKeychainItemSetAccess(ref, access!) == errSecSuccess)
        var copied: SecAccess?
        #expect(SecKeychainItemCopyAccess(ref, &copied) == errSecSuccess)
        let (paths, descriptor) = try contents(try #require(copied))
        #expect(paths == nil && descriptor == "opened")
        var after: CFTypeRef?
        #expect(SecItemCopyMatching(dateQuery as CFDictionary, &after) == errSecSuccess)
        let mdat = kSecAttrModificationDate as String
        #expect((before as? [String: Any])?[mdat] as? Date == (after as? [String: Any])?[mdat] as? Date)
    }

    @Test("Bad input: a path with no program, a list of other things, kSecAttrAccess outside SecItemAdd")
    func badInput() {
        var app: SecTrustedApplication?
        #expect(SecTrustedApplicationCreateFromPath("/no/such/program", &app) == errSecParam && app == nil)
        var access: SecAccess?
        #expect(SecAccessCreate("x" as CFString, ["not an application"] as CFArray, &access) == errSecParam && access == nil)
        #expect(SecAccessCreate("none" as CFString, [] as CFArray, &access) == errSecSuccess)
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccess as String: access!]
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecParam)
        #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccess as String: "x"] as CFDictionary, nil) == errSecParam)
    }

    @Test("The access object is encrypted with the item: no trusted program's path is in the file")
    func accessIsEncrypted() throws {
        var shell: SecTrustedApplication?
        #expect(SecTrustedApplicationCreateFromPath("/bin/sh", &shell) == errSecSuccess)
        var access: SecAccess?
        #expect(SecAccessCreate("descriptor-canary-91" as CFString, [shell!] as CFArray, &access) == errSecSuccess)
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "access",
                                  kSecAttrAccount as String: "r3", kSecValueData as String: Data("x".utf8), kSecAttrAccess as String: access!]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        let home = TestHome.current!.path
        var bytes = Data()
        for suffix in ["", "-wal"] { bytes += FileManager.default.contents(atPath: home + "/login.keychain-db" + suffix) ?? Data() }
        #expect(bytes.range(of: Data("descriptor-canary-91".utf8)) == nil)
        #expect(bytes.range(of: Data(URL(fileURLWithPath: "/bin/sh").resolvingSymlinksInPath().path.utf8)) == nil)
    }
}
