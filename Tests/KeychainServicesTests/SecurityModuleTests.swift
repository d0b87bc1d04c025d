#if os(Linux)
import Foundation
import KeychainTestSupport
import Security
import Testing

/// Code written for Apple platforms says `import Security`; on Linux that module is the mirror.
@Suite(.freshKeychain())
struct SecurityModuleTests {
    @Test("import Security gives the SecItem functions, constants and status codes")
    func importSecurity() {
        let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "via Security",
                                   kSecValueData as String: Data("pw".utf8)]
        #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
        var result: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "via Security",
                                    kSecReturnData as String: kCFBooleanTrue!]
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == noErr)
        #expect(result as? Data == Data("pw".utf8))
    }
}
#endif
