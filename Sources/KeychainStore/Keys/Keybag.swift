import Crypto
import FoundationEssentials

/// The `keybag` table: every key of a keychain, wrapped. Documented in docs/file-format.md.
///
/// Rows are `(keyclass, protection, wrapped)`. `keyclass` is an accessibility class or `index`
/// (the search-column key). `protection` names what wraps the key:
///
/// | protection | KEK | rows |
/// |---|---|---|
/// | `device` | the device key | no password: every key; with one: `index`, `dk`, `dku` |
/// | `device+password` | the device key and the password key together | `ak`, `ck`, `aku`, `cku`, `akpu` |
/// | `password` | the password key alone | only in a backup: `index`, `ak`, `ck`, `dk`, what opens it elsewhere |
///
/// A live file (format 2) has no `password` rows: without the device key, no guess of the
/// password can be tested against it. A password change replaces the password-protected class
/// keys and re-encrypts their items (``KeychainDatabase/changePassword(old:new:)``).
enum Keybag {
    static let indexKeyName = "index"

    enum Protection: String {
        case device
        case devicePassword = "device+password"
        case password
    }

    /// Where each key goes in a live file: its protection with or without a password.
    static func protections(of name: String, hasPassword: Bool) -> [Protection] {
        guard hasPassword else { return name == KeyClass.whenPasscodeSetThisDeviceOnly.rawValue ? [] : [.device] }
        return name == indexKeyName || KeyClass(rawValue: name)?.isPasswordProtected == false ? [.device] : [.devicePassword]
    }

    /// The keys a backup carries, wrapped under the password key alone: the migratable ones.
    static let backupKeys: Set<String> = [indexKeyName, KeyClass.whenUnlocked.rawValue, KeyClass.afterFirstUnlock.rawValue,
                                          KeyClass.always.rawValue]

    /// Replaces the keybag of a backup copy with the migratable keys under the password key alone.
    static func writeBackup(_ keys: [String: SymmetricKey], in connection: SQLiteConnection, keychainID: Data,
                            passwordKey: SymmetricKey) throws(StoreError) {
        try write(keys.filter { backupKeys.contains($0.key) }, in: connection, keychainID: keychainID, deviceKey: nil,
                  passwordKey: passwordKey) { _ in [.password] }
    }

    /// Fresh keys for every class a keychain with (or without) a password has.
    static func freshKeys(hasPassword: Bool) -> [String: SymmetricKey] {
        var keys = [indexKeyName: KeychainCrypto.randomKey()]
        for keyClass in KeyClass.allCases where hasPassword || !keyClass.requiresPassword {
            keys[keyClass.rawValue] = KeychainCrypto.randomKey()
        }
        return keys
    }

    /// Replaces the whole keybag with `keys` wrapped as `layout` says (by default the live file's,
    /// ``protections(of:hasPassword:)``), under the KEKs of `format`.
    static func write(_ keys: [String: SymmetricKey], in connection: SQLiteConnection, keychainID: Data,
                      deviceKey: SymmetricKey?, passwordKey: SymmetricKey?, format: Int64 = KeychainSchema.formatVersion,
                      layout: ((String) -> [Protection])? = nil) throws(StoreError) {
        try connection.execute("DELETE FROM keybag")
        let insert = try connection.prepare("INSERT INTO keybag(keyclass, protection, wrapped) VALUES (?, ?, ?)")
        for (name, key) in keys.sorted(by: { $0.key < $1.key }) {
            for protection in layout?(name) ?? protections(of: name, hasPassword: passwordKey != nil) {
                let kek = try self.kek(protection, name, keychainID, format: format, deviceKey: deviceKey, passwordKey: passwordKey)
                try insert.run([.text(name), .text(protection.rawValue), .blob(try KeychainCrypto.wrap(key, under: kek))])
            }
        }
    }

    /// The keys of one protection that opened, and the class keys whose rows did not.
    struct Opened {
        var keys: [String: SymmetricKey]
        /// Class keys whose rows are damaged: their items give `.decode`; the rest of the
        /// keychain works.
        var damaged: Set<KeyClass>
    }

    /// Opens every row of one protection. No row unwrapping is `.decode` for `device` rows
    /// (another machine's keychain) and `.authFailed` for password rows (the wrong password).
    /// An index key that does not unwrap while other keys do is a damaged keybag:
    /// `.invalidKeychain`. Any other row that does not unwrap is a damaged class key, reported
    /// in ``Opened/damaged``.
    static func open(_ protection: Protection, in connection: SQLiteConnection, keychainID: Data, format: Int64,
                     deviceKey: SymmetricKey?, passwordKey: SymmetricKey?) throws(StoreError) -> Opened {
        let rows = try connection.prepare("SELECT keyclass, wrapped FROM keybag WHERE protection = ?").rows([.text(protection.rawValue)])
        var opened = Opened(keys: [:], damaged: [])
        var indexDamaged = false
        for row in rows {
            guard let name = row[0].text, let wrapped = row[1].blob, name == indexKeyName || KeyClass(rawValue: name) != nil else {
                throw StoreError(.decode, "the keybag has a malformed row")
            }
            let kek = try self.kek(protection, name, keychainID, format: format, deviceKey: deviceKey, passwordKey: passwordKey)
            do {
                opened.keys[name] = try KeychainCrypto.unwrap(wrapped, under: kek)
            } catch {
                if let keyClass = KeyClass(rawValue: name) { opened.damaged.insert(keyClass) } else { indexDamaged = true }
            }
        }
        if opened.keys.isEmpty, !rows.isEmpty {
            if protection == .device { throw StoreError(.decode, "this machine's device key does not open the keychain") }
            throw StoreError(.authFailed, "the password is not correct")
        }
        if indexDamaged { throw StoreError(.invalidKeychain, "the keybag's index key is damaged") }
        return opened
    }

    /// The KEK of one row: bound to the keychain (salt), the key's name and the file's format
    /// (info), so a wrapped key moved to another row or keychain does not unwrap, and a file whose
    /// header claims another format than its keybag was written for opens nothing (a format-2 file
    /// relabelled as format 1, to escape the header's MAC, is refused, not migrated).
    private static func kek(_ protection: Protection, _ name: String, _ keychainID: Data, format: Int64,
                            deviceKey: SymmetricKey?, passwordKey: SymmetricKey?) throws(StoreError) -> SymmetricKey {
        let purpose = "keyhaven/v\(format >= 2 ? 2 : 1)/kek/\(protection.rawValue)/\(name)"
        switch protection {
        case .device:
            guard let deviceKey else { throw StoreError(.internalError, "no device key") }
            return KeychainCrypto.derive(deviceKey, salt: keychainID, purpose: purpose)
        case .password:
            guard let passwordKey else { throw StoreError(.internalError, "no password key") }
            return KeychainCrypto.derive(passwordKey, salt: keychainID, purpose: purpose)
        case .devicePassword:
            guard let deviceKey, let passwordKey else { throw StoreError(.internalError, "no device or password key") }
            // The device's share, bound to this keychain, salts the derivation from the password key.
            let binding = KeychainCrypto.derive(deviceKey, salt: keychainID, purpose: "keyhaven/v1/device-binding")
            return binding.withUnsafeBytes { KeychainCrypto.derive(passwordKey, salt: Data($0), purpose: purpose) }
        }
    }
}
