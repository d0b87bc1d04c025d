import Foundation
import KeychainServices

/// The one place the Keyhaven API calls Keychain Services. Every other file builds queries and
/// reads results; only this one turns an `OSStatus` into a ``KeychainError``.
enum SecItemClient {
    typealias Query = [String: Any]

    /// `SecItemCopyMatching`; nil when nothing matched.
    static func copyMatching(_ query: Query) throws(KeychainError) -> CFTypeRef? {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        try check(status, "SecItemCopyMatching", query)
        return result
    }

    /// Every matching item's attributes (`kSecReturnAttributes`, `kSecMatchLimitAll`), in the
    /// order they were added.
    static func attributeList(_ query: Query) throws(KeychainError) -> [[String: Any]] {
        var query = query
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        guard let result = try copyMatching(query) else { return [] }
        guard let items = result as? [[String: Any]] else {
            throw KeychainError(status: errSecDecode, operation: "SecItemCopyMatching", queryKeys: Array(query.keys),
                                message: "the keychain returned no attribute list", code: .unexpectedData)
        }
        return items
    }

    static func add(_ attributes: Query) throws(KeychainError) {
        try check(SecItemAdd(attributes as CFDictionary, nil), "SecItemAdd", attributes)
    }

    /// `SecItemUpdate`; false when nothing matched.
    static func update(_ query: Query, _ attributes: Query) throws(KeychainError) -> Bool {
        let status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound { return false }
        try check(status, "SecItemUpdate", query)
        return true
    }

    /// `SecItemDelete`; false when nothing matched.
    static func delete(_ query: Query) throws(KeychainError) -> Bool {
        let status = SecItemDelete(query as CFDictionary)
        if status == errSecItemNotFound { return false }
        try check(status, "SecItemDelete", query)
        return true
    }

    /// Adds, or updates the item the query finds: never delete-then-add, so an item is never
    /// missing in between.
    static func upsert(_ query: Query, _ attributes: Query) throws(KeychainError) {
        if try update(query, attributes) { return }
        do {
            try add(query.merging(attributes) { _, new in new })
        } catch KeychainError.duplicateItem {
            // Another thread or process added it first: ours wins, as the last write does.
            _ = try update(query, attributes)
        }
    }

    private static func check(_ status: OSStatus, _ operation: String, _ query: Query) throws(KeychainError) {
        guard status == errSecSuccess else {
            throw KeychainError(status: status, operation: operation, queryKeys: Array(query.keys))
        }
    }
}
