// Stores a secret in the default keychain with SecItemAdd and reads it back with
// SecItemCopyMatching: the same code as on an iPhone.
import Foundation
import KeychainServices

let service = "com.example.keyhaven-example"
let account = CommandLine.arguments.dropFirst().first ?? "demo"
let secret = Data("correct horse battery staple".utf8)

let item: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: service,
    kSecAttrAccount as String: account,
    kSecValueData as String: secret,
]
var status = SecItemAdd(item as CFDictionary, nil)
if status == errSecDuplicateItem {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                kSecAttrService as String: service, kSecAttrAccount as String: account]
    status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: secret] as CFDictionary)
}
guard status == errSecSuccess else {
    print("storing failed: \(SecCopyErrorMessageString(status, nil).map { String($0) } ?? "") (\(status))")
    exit(1)
}

let query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: service,
    kSecAttrAccount as String: account,
    kSecReturnData as String: true,
    kSecReturnAttributes as String: true,
]
var result: CFTypeRef?
status = SecItemCopyMatching(query as CFDictionary, &result)
guard status == errSecSuccess, let found = result as? [String: Any], let data = found[kSecValueData as String] as? Data else {
    print("reading failed: \(SecCopyErrorMessageString(status, nil).map { String($0) } ?? "") (\(status))")
    exit(1)
}
let readBack = data == secret ? "the same \(data.count) bytes" : "DIFFERENT bytes"
print("stored and read back \(readBack) for account \"\(account)\" in group \(found[kSecAttrAccessGroup as String] ?? "?")")
