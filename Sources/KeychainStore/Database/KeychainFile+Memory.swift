import Crypto
import FoundationEssentials

extension KeychainFile {
    /// A keychain that lives in this process's memory alone: an SQLite in-memory database with
    /// the tables, header and keybag of a keychain without a password, whose keybag is wrapped
    /// under a random key that is never written anywhere. Its rows are sealed as a file's are,
    /// under class keys in locked memory (``LockedKey``); it is gone with the process
    /// (the Secret Service's `session` collection, docs/secret-service.md).
    static func openInMemory() throws(StoreError) -> KeychainDatabase.Session {
        let connection = try SQLiteConnection(path: ":memory:", create: true)
        try connection.execute("PRAGMA application_id = \(KeychainSchema.applicationID)")
        try configure(connection)  // WAL and FULL have no effect in memory; the rest holds
        let deviceKey = KeychainCrypto.randomKey()
        let id = try initialize(connection, kdf: nil, deviceKey: deviceKey, passwordKey: nil)
        let keys = try Keybag.open(.device, in: connection, keychainID: id, format: KeychainSchema.formatVersion,
                                   deviceKey: deviceKey, passwordKey: nil)
        return KeychainDatabase.Session(connection: connection, keychainID: id, keys: UnlockedKeys(keys, hasPassword: false),
                                        homeDeviceKey: deviceKey, binding: .unbound, lock: .noPassword, settings: LockSettings(), lastUse: .now,
                                        format: KeychainSchema.formatVersion, epoch: 1, dataVersion: try KeychainDatabase.dataVersion(connection))
    }
}
