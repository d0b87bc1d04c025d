import Foundation
import KeychainKeys
import KeychainModel

/// Keys in the keychain (`kSecClassKey`).
enum KeyStorage {
    /// Adds a generated private key with the attributes `SecKeyCreateRandomKey` was given for it
    /// (Apple adds it through `SecItemAdd` with `kSecValueRef`), and returns the stored key.
    static func addGenerated(_ key: SecKey, attributes: [String: Any]) throws(KeyError) -> SecKey {
        var item = attributes
        item[QueryKey.itemClass] = ItemClass.key.rawValue
        item[QueryKey.valueRef] = key
        item[QueryKey.returnRef] = true
        item.removeValue(forKey: AttributeName.isPermanent.code)
        var result: CFTypeRef?
        let status = SecItemAdd(NSDictionary(dictionary: item), &result)
        guard status == errSecSuccess else { throw KeyError.fromStatus(status, "the key could not be added to the keychain") }
        return (result as? SecKey) ?? key
    }
}

extension KeyError {
    /// A keychain status carried as a key error (the status is kept for the `CFError`).
    static func fromStatus(_ status: OSStatus, _ message: String) -> KeyError {
        KeyError(.keychainStatus(status), message)
    }
}
