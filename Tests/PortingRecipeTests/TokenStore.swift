import Foundation

/// Keychain code as wrappers write it for Apple platforms: `import Foundation` only, `kSec*` keys
/// cast to `String`, `[String: Any]` bridged to `CFDictionary`, statuses compared with `errSec*`,
/// results cast from `AnyObject?`. It builds here because of Exports.swift alone.
struct TokenStore {
    let service: String

    enum Failure: Error, Equatable { case status(OSStatus) }

    private func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    func set(_ token: String, for account: String) throws {
        var item = query(account)
        item[kSecValueData as String] = token.data(using: .utf8)
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(item as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let update = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: Data(token.utf8)] as CFDictionary)
            guard update == errSecSuccess else { throw Failure.status(update) }
            return
        }
        guard status == errSecSuccess else { throw Failure.status(status) }
    }

    func token(for account: String) throws -> String? {
        var q = query(account)
        q[kSecReturnData as String] = kCFBooleanTrue
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = withUnsafeMutablePointer(to: &result) { SecItemCopyMatching(q as CFDictionary, UnsafeMutablePointer($0)) }
        if status == errSecItemNotFound { return nil }
        guard status == noErr, let data = result as? Data else { throw Failure.status(status) }
        return String(data: data, encoding: .utf8)
    }

    /// KeychainAccess's removeAll() on its macOS branch.
    func removeAll() throws {
        let status = SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Failure.status(status) }
    }
}
