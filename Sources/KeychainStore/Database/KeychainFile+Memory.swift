import Crypto
import FoundationEssentials

extension KeychainFile {
    /// A keychain that lives in this process's memory alone: an SQLite in-memory database with
    /// the tables, header and keybag of a keychain without a password, whose keybag is wrapped
    /// under a random key that is never written anywhere. Its rows are sealed as a file's are,
    /// under class keys in locked memory (``LockedKey``); it is gone with the process
    /// (the Secret Service's `session` collection, docs/secret-service.md).
    static func openInMemory() throws(StoreError) -> Opened {
        let connection = try SQLiteConnection(path: ":memory:", create: true)
        try connection.execute("""
            PRAGMA application_id = \(KeychainSchema.applicationID); PRAGMA secure_delete = ON; PRAGMA trusted_schema = OFF;
            PRAGMA cell_size_check = ON;
            """)
        let id = KeychainCrypto.randomBytes(16)
        let deviceKey = KeychainCrypto.randomKey()
        try connection.transaction(immediate: true) { () throws(StoreError) in
            for statement in KeychainSchema.createStatements() { try connection.execute(statement) }
            let header = try connection.prepare("INSERT INTO keychain(name, value) VALUES (?, ?)")
            try header.run([.text("id"), .blob(id)])
            try header.run([.text("created"), .integer(Int64(Date().timeIntervalSince1970))])
            let keys = Keybag.freshKeys(hasPassword: false)
            try writeHeader(connection, id: id, kdf: nil, settings: LockSettings(), epoch: 1, index: keys[Keybag.indexKeyName]!)
            try Keybag.write(keys, in: connection, keychainID: id, deviceKey: deviceKey, passwordKey: nil)
        }
        let keys = try Keybag.open(.device, in: connection, keychainID: id, format: KeychainSchema.formatVersion,
                                   deviceKey: deviceKey, passwordKey: nil)
        return Opened(connection: connection, keychainID: id, keys: UnlockedKeys(keys, hasPassword: false), deviceKey: deviceKey,
                      homeDeviceKey: deviceKey, sealed: nil, unsealed: false, kdf: nil, foreign: false, settings: LockSettings(),
                      format: KeychainSchema.formatVersion, epoch: 1, dataVersion: try KeychainDatabase.dataVersion(connection))
    }
}
