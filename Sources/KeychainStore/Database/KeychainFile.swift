#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import FoundationEssentials
import KeychainModel

/// Creating and opening keychain files.
///
/// A new keychain is built complete under a temporary name in the same folder (0600) and then
/// linked into place, so no process ever sees a half-made keychain, and a file at the final path
/// that is empty or lacks the header is damaged, never "new".
enum KeychainFile {
    /// Opens the keychain at `path`. A keychain with a password opens locked.
    static func open(path: String, home: KeychainHome) throws(StoreError) -> KeychainDatabase.Session {
        guard FileSecurity.fileSize(path) != nil else { throw StoreError(.noSuchKeychain, "no keychain at \(path)") }
        let connection = try SQLiteConnection(path: path, create: false)
        // Check before configuring: setting the journal mode writes, and a failed open of a file
        // that is not a keychain (or is empty) must leave it exactly as it was.
        let header = try readHeader(connection)
        try configure(connection)
        try addMissingClassTables(connection)
        // A keychain with a password may come from another machine: it then gets this home's
        // device key once its password opens it. Without a password, the device key is the only key.
        let homeDeviceKey = try DeviceKey.load(home: home, create: header.kdf != nil)
        func opened(_ keys: UnlockedKeys, binding: TPMBinding, foreign: Bool) throws(StoreError) -> KeychainDatabase.Session {
            KeychainDatabase.Session(connection: connection, keychainID: header.id, keys: keys, homeDeviceKey: homeDeviceKey, binding: binding,
                                     lock: LockState(kdf: header.kdf, foreign: foreign), settings: header.settings, lastUse: .now,
                                     format: header.format, epoch: header.epoch, dataVersion: try KeychainDatabase.dataVersion(connection))
        }
        // A bound keychain with a password opens locked and sealed: its password unseals it.
        if let seal = header.sealed, header.kdf != nil {
            return try opened(UnlockedKeys([:], hasPassword: true), binding: .sealed(seal), foreign: false)
        }
        let binding = try header.sealed.map { (seal) throws(StoreError) in
            TPMBinding.unsealed(seal, deviceKey: try HardwareBinding.open(seal, deviceKey: homeDeviceKey, passwordKey: nil, keychainID: header.id))
        } ?? .unbound
        let deviceKey = binding.deviceKey ?? homeDeviceKey
        do throws(StoreError) {
            let keys = try Keybag.open(.device, in: connection, keychainID: header.id, format: header.format, deviceKey: deviceKey, passwordKey: nil)
            // A backup has no device rows at all: like a copy, only its password opens it.
            guard let index = keys.keys[Keybag.indexKeyName] else { throw StoreError(.decode, "the keybag has no key for this machine") }
            try HeaderSeal.verify(header, index: index)
            return try opened(UnlockedKeys(keys, hasPassword: header.kdf != nil), binding: binding, foreign: false)
        } catch where error.code == .decode && header.kdf != nil {
            // Checked at the unlock that adopts it, once its password opens the index key. (Not
            // bound: a bound keychain with a password opened sealed above.)
            return try opened(UnlockedKeys([:], hasPassword: true), binding: .unbound, foreign: true)
        }
    }

    /// Creates the tables of classes newer than the file (`KeychainSchema.classTables`), in one
    /// transaction, only when one is missing: opening an up-to-date file writes nothing.
    /// The same for a generic-password table without the Secret Service discriminator's column
    /// (`KeychainSchema.addDiscriminator`): the table is rebuilt in that transaction.
    private static func addMissingClassTables(_ connection: SQLiteConnection) throws(StoreError) {
        let existing = Set(try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").rows().compactMap { $0.first?.text })
        let columns = try connection.prepare("SELECT name FROM pragma_table_info('genp')").rows().compactMap { $0.first?.text }
        let rebuild = !columns.isEmpty && !columns.contains(KeychainSchema.discriminatorColumn)
        guard rebuild || ItemClass.allCases.contains(where: { !existing.contains($0.rawValue) }) || !existing.contains("genp_ssattr") else {
            return
        }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let sequence = try connection.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'genp'").rows().first?.first?.integer
            let statements = rebuild ? KeychainSchema.addDiscriminator(existingColumns: columns) : KeychainSchema.classTables()
            for statement in statements { try connection.execute(statement) }
            // Row ids are never reused, so a deleted item's persistent reference names nothing new.
            if rebuild, let sequence {
                try connection.execute("DELETE FROM sqlite_sequence WHERE name = 'genp'")
                try connection.prepare("INSERT INTO sqlite_sequence(name, seq) VALUES ('genp', ?)").run([.integer(sequence)])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    static func configure(_ connection: SQLiteConnection) throws(StoreError) {
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
        /// 1: written before the header MAC, the tombstone binding and the live file without
        /// password-only rows; migrated to 2 once every key is in memory.
        let format: Int64
        /// Bumped whenever the class keys are replaced (a password change, a migration), so other
        /// processes with the file open drop keys that no longer open anything.
        let epoch: Int64
        /// The header's MAC (format 2, ``HeaderSeal``).
        let mac: Data?
        /// The TPM's seal of a bound keychain's secret (the `tpm` row), opaque here.
        let sealed: Data?
    }

    /// Whether the file at `path` is a keychain, by its first bytes alone (nothing opens or
    /// changes it): an SQLite database whose application id is "KHVN".
    static func isKeychain(_ path: String) -> Bool {
        let fd = System.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 72)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, $0.count, 0) }) == 72 else { return false }
        let applicationID = header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return header.starts(with: Array("SQLite format 3\0".utf8)) && applicationID == UInt32(bitPattern: KeychainSchema.applicationID)
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
        guard let version = values["format"]?.integer, version >= 1, let id = values["id"]?.blob, id.count == 16 else {
            throw StoreError(.invalidKeychain, "the keychain header is damaged")
        }
        guard version <= KeychainSchema.formatVersion else {
            throw StoreError(.wrongVersion, "the keychain was written by a newer version (format \(version))")
        }
        let kdf = try values["kdf"]?.blob.map { (data: Data) throws(StoreError) in try PasswordKDF(decoding: data) }
        let settings = try values["settings"]?.blob.map { (data: Data) throws(StoreError) in
            do throws(CodecError) { return try LockSettings(decoding: Array(data)) } catch {
                // A version this build does not know is a header it cannot read.
                throw error.code == .malformed ? StoreError(.invalidKeychain, error.message) : StoreError(error)
            }
        }
        return Header(id: id, kdf: kdf, settings: settings ?? LockSettings(), format: version,
                      epoch: values["epoch"]?.integer ?? 0, mac: values["mac"]?.blob, sealed: values["tpm"]?.blob)
    }

    /// Writes a bound keychain's seal (nil: not bound), inside the caller's transaction.
    static func writeSeal(_ connection: SQLiteConnection, _ sealed: Data?) throws(StoreError) {
        if let sealed {
            try connection.prepare("INSERT OR REPLACE INTO keychain(name, value) VALUES ('tpm', ?)").run([.blob(sealed)])
        } else {
            try connection.execute("DELETE FROM keychain WHERE name = 'tpm'")
        }
    }

    /// Writes the header's mutable part (the password function, the lock settings, the format and
    /// the epoch) and its MAC, inside the caller's transaction.
    static func writeHeader(_ connection: SQLiteConnection, id: Data, kdf: PasswordKDF?, settings: LockSettings,
                            epoch: Int64, index: SymmetricKey) throws(StoreError) {
        let set = try connection.prepare("INSERT OR REPLACE INTO keychain(name, value) VALUES (?, ?)")
        if let kdf { try set.run([.text("kdf"), .blob(kdf.encoded)]) } else {
            try connection.execute("DELETE FROM keychain WHERE name = 'kdf'")
        }
        try set.run([.text("settings"), .blob(Data(settings.encoded))])
        try set.run([.text("format"), .integer(KeychainSchema.formatVersion)])
        try set.run([.text("epoch"), .integer(epoch)])
        let mac = HeaderSeal.mac(format: KeychainSchema.formatVersion, id: id, kdf: kdf, settings: settings, epoch: epoch, index: index)
        try set.run([.text("mac"), .blob(mac)])
    }

    /// Makes an empty database a keychain, in one transaction: its tables, a new id, the header
    /// and fresh keys wrapped under `deviceKey` (and `passwordKey` with a password). Returns the id.
    static func initialize(_ connection: SQLiteConnection, kdf: PasswordKDF?, deviceKey: SymmetricKey,
                           passwordKey: SymmetricKey?) throws(StoreError) -> Data {
        try connection.transaction(immediate: true) { () throws(StoreError) -> Data in
            for statement in KeychainSchema.createStatements() { try connection.execute(statement) }
            let id = KeychainCrypto.randomBytes(16)
            let header = try connection.prepare("INSERT INTO keychain(name, value) VALUES (?, ?)")
            try header.run([.text("id"), .blob(id)])
            try header.run([.text("created"), .integer(Int64(Date().timeIntervalSince1970))])
            let keys = Keybag.freshKeys(hasPassword: kdf != nil)
            try writeHeader(connection, id: id, kdf: kdf, settings: LockSettings(), epoch: 1, index: keys[Keybag.indexKeyName]!)
            try Keybag.write(keys, in: connection, keychainID: id, deviceKey: deviceKey, passwordKey: passwordKey)
            return id
        }
    }

    /// Builds a complete new keychain and moves it into place; `.duplicateKeychain` if a file is there.
    static func create(path: String, home: KeychainHome, password: [UInt8]?) throws(StoreError) {
        guard FileSecurity.fileSize(path) == nil else { throw StoreError(.duplicateKeychain, "a keychain already exists at \(path)") }
        try home.prepare()
        // Folders it makes are 0700; an existing folder outside the home is left as it is.
        try FileSecurity.createMissingPrivateDirectories(parentFolder(of: path))
        let deviceKey = try DeviceKey.load(home: home, create: true)
        let kdf = try password.map { _ throws(StoreError) in try PasswordKDF.calibrated() }
        let passwordKey = try password.flatMap { (pw: [UInt8]) throws(StoreError) in try kdf?.deriveKey(from: pw) }
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let fd = System.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
            _ = try initialize(connection, kdf: kdf, deviceKey: deviceKey, passwordKey: passwordKey)
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        if link(temporary, path) != 0 {
            if errno == EEXIST { throw StoreError(.duplicateKeychain, "a keychain already exists at \(path)") }
            throw FileSecurity.error(errno, "cannot create the keychain \(path)")
        }
    }
}
