import Foundation
#if canImport(Security)
import Security
#endif

/// Keeps a token in the keychain where there is one, else says there is none.
public enum TokenVault {
    /// Whether this build has a keychain (`Security` was visible when it compiled).
    public static var hasKeychain: Bool {
        #if canImport(Security)
        true
        #else
        false
        #endif
    }

    /// Stores `token` for `account`, replacing what was there; the keychain's status, or nil
    /// without a keychain.
    public static func store(_ token: String, account: String) -> Int32? {
        #if canImport(Security)
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "guarded",
                                    kSecAttrAccount as String: account]
        SecItemDelete(query as CFDictionary)
        var item = query
        item[kSecValueData as String] = Data(token.utf8)
        return SecItemAdd(item as CFDictionary, nil)
        #else
        return nil
        #endif
    }

    /// The token stored for `account`, if any.
    public static func token(account: String) -> String? {
        #if canImport(Security)
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "guarded",
                                    kSecAttrAccount as String: account, kSecReturnData as String: true]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let data = result as? Data else { return nil }
        return String(decoding: data, as: UTF8.self)
        #else
        return nil
        #endif
    }
}
