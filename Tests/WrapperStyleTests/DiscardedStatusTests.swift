import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// Code written against Apple's C functions calls them without using their status (C imports
/// allow it: Valet's tests do so 16 times). This target is compiled with `-warnings-as-errors`, so
/// a status-returning function that is not `@discardableResult` fails the build here.
@Suite(.freshKeychain())
struct DiscardedStatusTests {
    @Test("Every status-returning function can be called without using its result")
    func discardedResults() throws {
        let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "discarded",
                                   kSecValueData as String: Data("x".utf8)]
        SecItemAdd(item as CFDictionary, nil)
        SecItemCopyMatching(item as CFDictionary, nil)
        SecItemUpdate([kSecClass as String: kSecClassGenericPassword] as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary)
        SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary)
        var bytes = [UInt8](repeating: 0, count: 16)
        SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes)
        SecCopyErrorMessageString(errSecItemNotFound, nil)
        SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil)
        var keychain: SecKeychain?
        SecKeychainCreate(TestHome.current!.path + "/discarded.keychain-db", 2, "pw", false, nil, &keychain)
        SecKeychainLock(keychain)
        SecKeychainUnlock(keychain, 2, "pw", true)
        var status: SecKeychainStatus = 0
        SecKeychainGetStatus(keychain, &status)
        SecKeychainAddGenericPassword(keychain, 3, "svc", 3, "acc", 1, "s", nil)
        SecKeychainFindGenericPassword(keychain, 3, "svc", 3, "acc", nil, nil, nil)
        SecKeychainChangePassword(keychain, 2, "pw", 3, "pw2")
        SecKeychainLockAll()
        SecKeychainDelete(keychain)
        #expect(SecItemCopyMatching(item as CFDictionary, nil) == errSecItemNotFound)
    }
}
