import Foundation
import KeychainServices

/// The operations of the reliability modes, on generic passwords whose data and label both hold
/// a version string, so a half-made write (one without the other) is visible to the checker.
enum VersionedItems {
    static let service = "reliability"

    static func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    static func add(_ account: String, _ version: String) -> OSStatus {
        var item = query(account)
        item[kSecValueData as String] = Data(version.utf8)
        item[kSecAttrLabel as String] = version
        return SecItemAdd(item as CFDictionary, nil)
    }

    static func update(_ account: String, _ version: String) -> OSStatus {
        let changes: [String: Any] = [kSecValueData as String: Data(version.utf8), kSecAttrLabel as String: version]
        return SecItemUpdate(query(account) as CFDictionary, changes as CFDictionary)
    }

    static func delete(_ account: String) -> OSStatus { SecItemDelete(query(account) as CFDictionary) }

    /// The item's version; "torn" if its data and label disagree.
    static func read(_ account: String) -> (OSStatus, String?) {
        var q = query(account)
        q[kSecReturnData as String] = true
        q[kSecReturnAttributes as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        guard status == errSecSuccess, let found = result as? [String: Any] else { return (status, nil) }
        let data = (found[kSecValueData as String] as? Data).map { String(decoding: $0, as: UTF8.self) }
        return (status, data == found[kSecAttrLabel as String] as? String ? data : "torn")
    }

    /// Writes a line to standard output at once (no buffering: a SIGKILL must not lose a line
    /// that was written before it).
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if errno == EINTR { continue } else { exit(3) } }
            offset += n
        }
    }
}
