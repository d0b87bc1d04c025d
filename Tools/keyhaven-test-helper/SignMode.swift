import Foundation
import KeychainServices
import KeychainServicesExtras

/// `sign TAG MESSAGE`: finds the private key tagged TAG (in the access group `test.group.a`, the
/// keychain tests' default) and prints its ECDSA signature (X9.62, SHA-256) of MESSAGE in hex, or
/// `failed STATUS`.
func runSignMode(tag: String, message: String) -> Never {
    SecAccessGroupsSetCurrent(["test.group.a"] as NSArray)
    let query: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data(tag.utf8),
                                kSecAttrKeyClass as String: kSecAttrKeyClassPrivate, kSecReturnRef as String: true]
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    guard status == errSecSuccess, let key = result as? SecKey else {
        print("failed \(status)")
        exit(1)
    }
    var error: Unmanaged<CFError>?
    guard let signature = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, Data(message.utf8) as CFData, &error) as Data? else {
        print("failed \(error.map { $0.takeRetainedValue().code } ?? 0)")
        exit(1)
    }
    print(signature.map { String(format: "%02x", $0) }.joined())
    exit(0)
}
