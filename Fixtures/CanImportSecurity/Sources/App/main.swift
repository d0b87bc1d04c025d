import Guarded
import Security

// Stores and reads back a token through the guarded library, then through Security directly.
let status = TokenVault.store("fixture-token", account: "app")
print("guarded keychain=\(TokenVault.hasKeychain) store=\(status.map(String.init) ?? "none") read=\(TokenVault.token(account: "app") ?? "none")")
var result: AnyObject?
let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "guarded",
                            kSecAttrAccount as String: "app", kSecReturnData as String: true]
print("direct=\(SecItemCopyMatching(query as CFDictionary, &result))")
