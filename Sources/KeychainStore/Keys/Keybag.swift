import Crypto
import FoundationEssentials

/// The `keybag` table: every class key of a keychain, wrapped.
///
/// Rows are `(keyclass, protection, wrapped)`. `keyclass` is an accessibility class (`ak`, `dku`,
/// ...) or `index` (the search-column key). `protection` names what wraps it:
///
/// - `device`: a key derived from the device key alone (keychains without a password).
///
/// Keychain passwords add `device+password` and `password` rows (the lock model); the table and
/// the item format do not change when they come, because items are encrypted under keys derived
/// from the class key, whatever wraps it.
enum Keybag {
    static let indexKeyName = "index"

    /// Creates the keys of a new keychain without a password and stores them wrapped.
    static func create(in connection: SQLiteConnection, keychainID: Data, deviceKey: SymmetricKey) throws(StoreError) -> UnlockedKeys {
        let insert = try connection.prepare("INSERT INTO keybag(keyclass, protection, wrapped) VALUES (?, 'device', ?)")
        let index = KeychainCrypto.randomKey()
        try insert.run([.text(indexKeyName), .blob(try wrap(index, name: indexKeyName, keychainID, deviceKey))])
        var classes: [KeyClass: ClassKeys] = [:]
        for keyClass in KeyClass.allCases where !keyClass.requiresPassword {
            let classKey = KeychainCrypto.randomKey()
            try insert.run([.text(keyClass.rawValue), .blob(try wrap(classKey, name: keyClass.rawValue, keychainID, deviceKey))])
            classes[keyClass] = ClassKeys(classKey: classKey)
        }
        return UnlockedKeys(index: index, classes: classes)
    }

    /// Opens every key that the device key alone protects.
    static func open(in connection: SQLiteConnection, keychainID: Data, deviceKey: SymmetricKey) throws(StoreError) -> UnlockedKeys {
        let rows = try connection.prepare("SELECT keyclass, wrapped FROM keybag WHERE protection = 'device'").rows()
        var index: SymmetricKey?
        var classes: [KeyClass: ClassKeys] = [:]
        for row in rows {
            guard let name = row[0].text, let wrapped = row[1].blob else {
                throw StoreError(.decode, "the keybag has a malformed row")
            }
            let key = try unwrap(wrapped, name: name, keychainID, deviceKey)
            if name == indexKeyName {
                index = key
            } else if let keyClass = KeyClass(rawValue: name) {
                classes[keyClass] = ClassKeys(classKey: key)
            } else {
                throw StoreError(.decode, "the keybag names an unknown key class")
            }
        }
        guard let index else { throw StoreError(.decode, "the keybag has no index key") }
        return UnlockedKeys(index: index, classes: classes)
    }

    /// The KEK for one keybag row: a derivation of the device key bound to the keychain and class,
    /// so wrapped keys cannot be moved between rows or keychains.
    private static func kek(_ name: String, _ keychainID: Data, _ deviceKey: SymmetricKey) -> SymmetricKey {
        KeychainCrypto.derive(deviceKey, salt: keychainID, purpose: "keyhaven/v1/kek/device/\(name)")
    }

    private static func wrap(_ key: SymmetricKey, name: String, _ id: Data, _ deviceKey: SymmetricKey) throws(StoreError) -> Data {
        try KeychainCrypto.wrap(key, under: kek(name, id, deviceKey))
    }

    private static func unwrap(_ wrapped: Data, name: String, _ id: Data, _ deviceKey: SymmetricKey) throws(StoreError) -> SymmetricKey {
        try KeychainCrypto.unwrap(wrapped, under: kek(name, id, deviceKey))
    }
}
