import Foundation
import KeychainServices

/// `keyhaven-test-helper item OPERATION ACCOUNT`: one SecItem call on a generic password of service
/// "access" with this process's own access groups (KEYHAVEN_ACCESS_GROUPS, else its application
/// group); prints `status N`, then `data TEXT` after a read. The per-application access tests run
/// it and a modified copy of it against one agent. Operations: add (data = account), read,
/// read-noui (kSecUseAuthenticationUIFail), read-skip (kSecUseAuthenticationUISkip), read-quiet
/// (after SecKeychainSetUserInteractionAllowed(false)), update (data = "updated"), delete,
/// add-any (trusted by every application: an access object from SecAccessCreate with no list).
func runItemMode(operation: String, account: String) -> Never {
    var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "access",
                                kSecAttrAccount as String: account]
    var status: OSStatus
    var data: Data?
    switch operation {
    case "add":
        query[kSecValueData as String] = Data(account.utf8)
        query[kSecAttrLabel as String] = "item \(account)"
        status = SecItemAdd(query as CFDictionary, nil)
    case "read", "read-noui", "read-skip", "read-quiet":
        query[kSecReturnData as String] = true
        if operation == "read-noui" { query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail }
        if operation == "read-skip" { query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip }
        if operation == "read-quiet" { SecKeychainSetUserInteractionAllowed(false) }
        var result: CFTypeRef?
        status = SecItemCopyMatching(query as CFDictionary, &result)
        data = result as? Data
    case "update":
        status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: Data("updated".utf8)] as CFDictionary)
    case "delete":
        status = SecItemDelete(query as CFDictionary)
    default:
        print("unknown operation")
        exit(2)
    }
    print("status \(status)")
    if let data { print("data \(String(decoding: data, as: UTF8.self))") }
    exit(0)
}
