import Foundation
import KeychainServices
import KeychainServicesExtras

/// `keyhaven-test-helper item OPERATION ACCOUNT`: one SecItem call on a generic password of service
/// "access" with this process's own access groups (KEYHAVEN_ACCESS_GROUPS, else its application
/// group); prints `status N`, then `data TEXT` after a read. The per-application access tests run
/// it and a modified copy of it against one agent. Operations: add (data = $KEYHAVEN_TEST_DATA,
/// else the account), hold (reads, prints only the status, keeps the data in memory), read,
/// read-noui (kSecUseAuthenticationUIFail), read-skip (kSecUseAuthenticationUISkip), read-quiet
/// (after SecKeychainSetUserInteractionAllowed(false)), update (data = "updated"), delete,
/// add-trusting (kSecAttrAccess from SecAccessCreate: this program and $KEYHAVEN_TEST_TRUST),
/// add-any (SecAccessCreate, then SecACLSetContents with no list: every program),
/// add-after-first-unlock (kSecAttrAccessibleAfterFirstUnlock), add-presence
/// (kSecAccessControlUserPresence), add-biometry (kSecAccessControlBiometryAny), add-biometry-set
/// (kSecAccessControlBiometryCurrentSet), add-either (biometry or passcode), read-twice (two reads in this process, with
/// SecUserPresenceSetReuseDuration($KEYHAVEN_TEST_REUSE) first), read-steps (three reads without
/// a prompt, each after the test says go: a debugger attached in between).
func runItemMode(operation: String, account: String) -> Never {
    var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "access",
                                kSecAttrAccount as String: account]
    var status: OSStatus
    var data: Data?
    switch operation {
    case "add", "add-trusting", "add-any", "add-after-first-unlock":
        query[kSecValueData as String] = Data((ProcessInfo.processInfo.environment["KEYHAVEN_TEST_DATA"] ?? account).utf8)
        query[kSecAttrLabel as String] = "item \(account)"
        if operation == "add-trusting" || operation == "add-any" { query[kSecAttrAccess as String] = access(any: operation == "add-any") }
        if operation == "add-after-first-unlock" { query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock }
        status = SecItemAdd(query as CFDictionary, nil)
    case "add-presence", "add-biometry", "add-either", "add-biometry-set":
        query[kSecValueData as String] = Data(account.utf8)
        let flags: SecAccessControlCreateFlags = operation == "add-presence" ? .userPresence
            : operation == "add-biometry" ? .biometryAny : operation == "add-biometry-set" ? .biometryCurrentSet
            : [.biometryAny, .or, .devicePasscode]
        query[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, flags, nil)
        status = SecItemAdd(query as CFDictionary, nil)
    case "read-twice":
        SecUserPresenceSetReuseDuration(TimeInterval(ProcessInfo.processInfo.environment["KEYHAVEN_TEST_REUSE"] ?? "0") ?? 0)
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecSuccess { status = SecItemCopyMatching(query as CFDictionary, &result) }
        data = result as? Data
    case "read-steps":
        // Three reads without a prompt on this process's one connection: the first at once, each
        // next once the file $KEYHAVEN_TEST_GO.N exists (N = 1, 2); prints `status N` after each.
        query[kSecReturnData as String] = true
        query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        let go = ProcessInfo.processInfo.environment["KEYHAVEN_TEST_GO"] ?? "/nonexistent"
        for step in 0..<3 {
            if step > 0 {
                for _ in 0..<600 where !FileManager.default.fileExists(atPath: go + ".\(step)") { usleep(50_000) }
            }
            var result: CFTypeRef?
            print("status \(SecItemCopyMatching(query as CFDictionary, &result))")
            fflush(nil)
        }
        exit(0)
    case "hold":
        // Reads the item and keeps its data in memory, unprinted, for $KEYHAVEN_TEST_HOLD seconds.
        query[kSecReturnData as String] = true
        query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        var result: CFTypeRef?
        print("status \(SecItemCopyMatching(query as CFDictionary, &result))")
        fflush(nil)
        sleep(UInt32(ProcessInfo.processInfo.environment["KEYHAVEN_TEST_HOLD"] ?? "5") ?? 5)
        withExtendedLifetime(result) {}
        exit(0)
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

/// An access object for this program and $KEYHAVEN_TEST_TRUST, or (any) for every program.
func access(any: Bool) -> SecAccess {
    var me: SecTrustedApplication?, other: SecTrustedApplication?
    guard SecTrustedApplicationCreateFromPath(nil, &me) == errSecSuccess, let me else { fail("no trusted application", -1) }
    var list: [SecTrustedApplication] = [me]
    if let path = ProcessInfo.processInfo.environment["KEYHAVEN_TEST_TRUST"] {
        guard SecTrustedApplicationCreateFromPath(path, &other) == errSecSuccess, let other else { fail("no trusted application", -1) }
        list.append(other)
    }
    var access: SecAccess?
    guard SecAccessCreate("test item" as CFString, list as CFArray, &access) == errSecSuccess, let access else { fail("no access", -1) }
    if any {
        var acls: CFArray?
        _ = SecAccessCopyACLList(access, &acls)
        for acl in (acls as? [SecACL]) ?? [] { _ = SecACLSetContents(acl, nil, "test item" as CFString, []) }
    }
    return access
}
