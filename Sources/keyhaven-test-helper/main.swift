// A separate process for the multi-process tests: performs keychain operations on the keychain of
// $KEYHAVEN_HOME and reports on stdout. Not installed; tests run it from the build folder.
//
//   keyhaven-test-helper add PREFIX COUNT        adds PREFIX-0 ... PREFIX-(COUNT-1) (data = name)
//   keyhaven-test-helper read PREFIX COUNT       checks each item's data, prints "ok N"
//   keyhaven-test-helper churn PREFIX COUNT      add, update, read, delete each item in turn
import Foundation
import KeychainServices
import KeychainServicesExtras

SecAccessGroupsSetCurrent(["multi.process.group"] as CFArray)
let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: keyhaven-test-helper add|read|churn PREFIX COUNT\n".utf8))
    exit(2)
}
let (mode, prefix) = (arguments[1], arguments[2])

func query(_ account: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "multi", kSecAttrAccount as String: account]
}

func fail(_ what: String, _ status: OSStatus) -> Never {
    print("error \(what) \(status)")
    exit(1)
}

func read(_ account: String) -> Data? {
    var q = query(account)
    q[kSecReturnData as String] = true
    var result: CFTypeRef?
    let status = SecItemCopyMatching(q as CFDictionary, &result)
    if status == errSecItemNotFound { return nil }
    guard status == errSecSuccess else { fail("read \(account)", status) }
    return result as? Data
}

var checked = 0
for i in 0..<count {
    let account = "\(prefix)-\(i)"
    switch mode {
    case "add":
        var item = query(account)
        item[kSecValueData as String] = Data(account.utf8)
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(account)", status) }
    case "read":
        guard read(account) == Data(account.utf8) else { fail("wrong data for \(account)", -1) }
    case "churn":
        var item = query(account)
        item[kSecValueData as String] = Data("first".utf8)
        var status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(account)", status) }
        status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: Data("second".utf8)] as CFDictionary)
        guard status == errSecSuccess else { fail("update \(account)", status) }
        guard read(account) == Data("second".utf8) else { fail("wrong data after update \(account)", -1) }
        status = SecItemDelete(query(account) as CFDictionary)
        guard status == errSecSuccess else { fail("delete \(account)", status) }
    default:
        fail("unknown mode", -2)
    }
    checked += 1
}
print("ok \(checked)")
