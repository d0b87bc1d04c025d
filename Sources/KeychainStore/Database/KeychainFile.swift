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
    }

    /// Opens the keychain at `path`, creating it (without a password) if it does not exist and
    /// `create` is true.
    static func open(path: String, home: KeychainHome, create: Bool) throws(StoreError) -> Opened {
        if FileSecurity.fileSize(path) == nil {
            guard create else { throw StoreError(.notAvailable, "no keychain at \(path)") }
            try home.prepare()
            try FileSecurity.ensurePrivateDirectory(parentFolder(of: path))
            try build(path: path, home: home)
        }
        let connection = try SQLiteConnection(path: path, create: false)
        // Check before configuring: setting the journal mode writes, and a failed open of a file
        // that is not a keychain (or is empty) must leave it exactly as it was.
        let keychainID = try validateHeader(connection)
        try configure(connection)
        let deviceKey = try DeviceKey.load(home: home, create: false)
        let keys = try Keybag.open(in: connection, keychainID: keychainID, deviceKey: deviceKey)
        return Opened(connection: connection, keychainID: keychainID, keys: keys)
    }

    private static func configure(_ connection: SQLiteConnection) throws(StoreError) {
        // WAL: readers never see half an update and never block the writer. FULL: a write the
        // caller saw succeed survives a crash. secure_delete: freed pages are zeroed.
        try connection.execute("""
            PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;
            PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON;
            """)
    }

    /// Checks that the file is a keychain this build can read; returns its identifier.
    private static func validateHeader(_ connection: SQLiteConnection) throws(StoreError) -> Data {
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
        return id
    }

    /// Builds a complete new keychain and moves it into place.
    private static func build(path: String, home: KeychainHome) throws(StoreError) {
        let deviceKey = try DeviceKey.load(home: home, create: true)
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
                _ = try Keybag.create(in: connection, keychainID: id, deviceKey: deviceKey)
            }
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw FileSecurity.error(errno, "cannot create the keychain \(path)")
        }
    }
}
