import Foundation
import KeychainServices

/// How long the reliability suite runs: a short variant by default (CI), the counts that
/// docs/reliability.md reports with `KEYHAVEN_RELIABILITY=full`.
enum Reliability {
    static var isFull: Bool { ProcessInfo.processInfo.environment["KEYHAVEN_RELIABILITY"] == "full" }

    static func count(quick: Int, full: Int) -> Int { isFull ? full : quick }

    /// Prints a result line for docs/reliability.md (`scripts/reliability.sh` collects them).
    static func record(_ line: String) { print("reliability: \(line)") }
}

/// The reliability helper modes' items (keyhaven-test-helper's VersionedItems): data and label
/// both hold a version.
enum VersionedKeychain {
    static let service = "reliability"

    /// Every item's version by account; nil and a message if any read fails or any item is torn
    /// (data and label from different writes).
    static func readAll() -> (versions: [String: String], problem: String?) {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                                    kSecReturnData as String: true]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return ([:], nil) }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { return ([:], "reading every item gave \(status)") }
        var versions: [String: String] = [:]
        for item in items {
            let account = item[kSecAttrAccount as String] as? String ?? "?"
            let data = (item[kSecValueData as String] as? Data).map { String(decoding: $0, as: UTF8.self) }
            guard let data, data == item[kSecAttrLabel as String] as? String else {
                return ([:], "\(account) is torn: data \(data ?? "none"), label \(item[kSecAttrLabel as String] as? String ?? "none")")
            }
            guard versions.updateValue(data, forKey: account) == nil else { return ([:], "\(account) is there twice") }
        }
        return (versions, nil)
    }
}
