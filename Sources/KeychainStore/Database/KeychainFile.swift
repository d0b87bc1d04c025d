#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import FoundationEssentials

/// Creating and opening keychain files.
///
/// A new keychain is built complete under a temporary name in the same folder (0600) and then
/// linked into place, so no process ever sees a half-made keychain, and a file at the final path
/// that is empty or lacks the header is damaged, never "new".
enum KeychainFile {
    struct Opened {
        let connection: SQLiteConnection
        let keychainID: Data
        let keys: UnlockedKeys
        let deviceKey: SymmetricKey
        let kdf: PasswordKDF?
        /// This machine's device key does not open the keychain: only its password can.
        let foreign: Bool
        let settings: LockSettings
    }

    /// Opens the keychain at `path`. A keychain with a password opens locked.
    static func open(path: String, home: KeychainHome) throws(StoreError) -> Opened {
        guard FileSecurity.fileSize(path) != nil else { throw StoreError(.noSuchKeychain, "no keychain at \(path)") }
        let connection = try SQLiteConnection(path: path, create: false)
        // Check before configuring: setting the journal mode writes, and a failed open of a file
        // that is not a keychain (or is empty) must leave it exactly as it was.
        let header = try readHeader(connection)
        try configure(connection)
        // A keychain with a password may come from another machine: it then gets this home's
        // device key once its password opens it. Without a password, the device key is the only key.
        let deviceKey = try DeviceKey.load(home: home, create: header.kdf != nil)
        do throws(StoreError) {
            let keys = try Keybag.open(.device, in: connection, keychainID: header.id, deviceKey: deviceKey, passwordKey: nil)
            // A backup has no device rows at all: like a copy, only its password opens it.
            guard keys.keys[Keybag.indexKeyName] != nil else { throw StoreError(.decode, "the keybag has no key for this machine") }
            return Opened(connection: connection, keychainID: header.id, keys: UnlockedKeys(keys, hasPassword: header.kdf != nil),
                          deviceKey: deviceKey, kdf: header.kdf, foreign: false, settings: header.settings)
        } catch where error.code == .decode && header.kdf != nil {
            return Opened(connection: connection, keychainID: header.id, keys: UnlockedKeys([:], hasPassword: true),
                          deviceKey: deviceKey, kdf: header.kdf, foreign: true, settings: header.settings)
        }
    }

    private static func configure(_ connection: SQLiteConnection) throws(StoreError) {
        // WAL: readers never see half an update and never block the writer. FULL: a write the
        // caller saw succeed survives a crash. secure_delete: freed pages are zeroed. A page cache
        // of up to 16 MiB (SQLite's default is 2): a look-up in a 10,000-item keychain (about 12
        // MiB) then reads no page from the file; the cache never outgrows the file.
        try connection.execute("""
            PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;
            PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; PRAGMA cache_size = -16384;
            """)
    }

    struct Header {
        let id: Data
        let kdf: PasswordKDF?
        let settings: LockSettings
    }

    /// Checks that the file is a keychain this build can read.
    static func readHeader(_ connection: SQLiteConnection) throws(StoreError) -> Header {
        let appID = try connection.prepare("PRAGMA application_id").rows().first?.first?.integer
        guard appID == Int64(KeychainSchema.applicationID) else {
            throw StoreError(.invalidKeychain, "the file is not a keychain")
        }
        let rows = try connection.prepare("SELECT name, value FROM keychain").rows()
        var values: [String: SQLiteValue] = [:]
        for row in rows { if let name = row[0].text { values[name] = row[1] } }
        guard let version = values["format"]?.integer, let id = values["id"]?.blob, id.count == 16 else {
            throw StoreError(.invalidKeychain, "the keychain header is damaged")
        }
        guard version <= KeychainSchema.formatVersion else {
            throw StoreError(.wrongVersion, "the keychain was written by a newer version (format \(version))")
        }
        let kdf = try values["kdf"]?.blob.map { (data: Data) throws(StoreError) in try PasswordKDF(decoding: data) }
        let settings = try values["settings"]?.blob.map { (data: Data) throws(StoreError) in try LockSettings(decoding: Array(data)) }
        return Header(id: id, kdf: kdf, settings: settings ?? LockSettings())
    }

    /// Builds a complete new keychain and moves it into place; `.duplicateKeychain` if a file is there.
    static func create(path: String, home: KeychainHome, password: [UInt8]?) throws(StoreError) {
        guard FileSecurity.fileSize(path) == nil else { throw StoreError(.duplicateKeychain, "a keychain already exists at \(path)") }
        try home.prepare()
        try FileSecurity.ensurePrivateDirectory(parentFolder(of: path))
        let deviceKey = try DeviceKey.load(home: home, create: true)
        let kdf = try password.map { _ throws(StoreError) in try PasswordKDF.calibrated() }
        let passwordKey = try password.flatMap { (pw: [UInt8]) throws(StoreError) in try kdf?.deriveKey(from: pw) }
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileSecurity.error(errno, "cannot create \(temporary)") }
        close(fd)
        defer {
            unlink(temporary)
            unlink(temporary + "-journal")
            unlink(temporary + "-wal")
            unlink(temporary + "-shm")
        }
        do {
            let connection = try SQLiteConnection(path: temporary, create: false)
            try connection.execute("PRAGMA application_id = \(KeychainSchema.applicationID)")
            try connection.transaction(immediate: true) { () throws(StoreError) in
                for statement in KeychainSchema.createStatements() { try connection.execute(statement) }
                let id = KeychainCrypto.randomBytes(16)
                let header = try connection.prepare("INSERT INTO keychain(name, value) VALUES (?, ?)")
                try header.run([.text("format"), .integer(KeychainSchema.formatVersion)])
                try header.run([.text("id"), .blob(id)])
                try header.run([.text("created"), .integer(Int64(Date().timeIntervalSince1970))])
                if let kdf { try header.run([.text("kdf"), .blob(kdf.encoded)]) }
                try Keybag.write(Keybag.freshKeys(hasPassword: password != nil), in: connection, keychainID: id,
                                 deviceKey: deviceKey, passwordKey: passwordKey)
            }
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        if link(temporary, path) != 0 {
            if errno == EEXIST { throw StoreError(.duplicateKeychain, "a keychain already exists at \(path)") }
            throw FileSecurity.error(errno, "cannot create the keychain \(path)")
        }
    }
}
