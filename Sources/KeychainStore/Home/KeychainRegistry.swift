import FoundationEssentials
import Synchronization

/// The keychains this process has open, one ``KeychainDatabase`` per file.
///
/// Opening is serialized; a cached database whose file was deleted or replaced is reopened.
package final class KeychainRegistry: Sendable {
    package static let shared = KeychainRegistry()

    private let open = Mutex<[String: KeychainDatabase]>([:])

    package init() {}

    /// The default keychain of the current keychain home. The login keychain is created on first
    /// use; another default keychain must exist.
    package func defaultKeychain() throws(StoreError) -> KeychainDatabase {
        let home = try KeychainHome.current()
        let path = try KeychainPreferences.load(home).defaultPath(home)
        return try database(at: path, home: home, create: path == home.defaultKeychainPath)
    }

    /// The keychains a call that names none searches, in order (the search list).
    ///
    /// Every call looks at the files again (another process may have changed the preferences or
    /// replaced a keychain): one `stat` of the preferences and one of each keychain in the list.
    package func searchList() throws(StoreError) -> [KeychainDatabase] {
        let home = try KeychainHome.current()
        let defaultPath = home.defaultKeychainPath
        var databases: [KeychainDatabase] = []
        for path in try KeychainPreferences.load(home).searchPaths(home) {
            // A keychain whose file is gone is passed over, as macOS does; the login keychain
            // is created on first use.
            let identity = FileIdentity(path: path)
            guard identity != nil || path == defaultPath else { continue }
            databases.append(try database(at: path, home: home, create: path == defaultPath, identity: identity))
        }
        return databases
    }

    /// The keychain at `path`, opened once and then shared; with `create`, made (without a
    /// password) if there is none.
    package func database(at path: String, home: KeychainHome, create: Bool) throws(StoreError) -> KeychainDatabase {
        try database(at: path, home: home, create: create, identity: FileIdentity(path: path))
    }

    /// `identity`: the file's identity as just seen (nil: no file).
    private func database(at path: String, home: KeychainHome, create: Bool, identity: FileIdentity?) throws(StoreError) -> KeychainDatabase {
        if let identity, let cached = open.withLock({ $0[path] }), cached.fileIdentity == identity {
            return cached
        }
        if create && identity == nil {
            do throws(StoreError) { try KeychainFile.create(path: path, home: home, password: nil) } catch where error.code == .duplicateKeychain {}
        }
        return try open.withLock { (open: inout [String: KeychainDatabase]) throws(StoreError) -> KeychainDatabase in
            let current = FileIdentity(path: path)
            if let cached = open[path], current != nil, cached.fileIdentity == current {
                return cached
            }
            let database = try KeychainDatabase(path: path, home: home)
            open[path] = database
            return database
        }
    }

    /// Creates a keychain at `path`, with a password or without (nil or empty), and opens it
    /// unlocked.
    package func create(at path: String, home: KeychainHome, password: [UInt8]?) throws(StoreError) -> KeychainDatabase {
        let password = password.flatMap { $0.isEmpty ? nil : $0 }
        try KeychainFile.create(path: path, home: home, password: password)
        let database = try self.database(at: path, home: home, create: false)
        if let password { try database.unlock(password: password) }
        return database
    }

    /// Locks every keychain this process has open.
    package func lockAll() {
        for database in open.withLock({ Array($0.values) }) { database.lock() }
    }

    /// Locks the open keychains whose settings say to lock with the screen and on sleep; the
    /// paths of those it locked.
    package func lockForScreenOrSleep() -> [String] {
        open.withLock { Array($0) }.filter { $0.value.lockForScreenOrSleep() }.map(\.key).sorted()
    }

    /// Applies every open keychain's lock interval now (after ``UserActivity`` changed); the
    /// paths of those that were unlocked and are locked now.
    package func applyAutoLocks() -> [String] {
        open.withLock { Array($0) }.filter { $0.value.applyAutoLock() }.map(\.key).sorted()
    }

    /// Closes the keychain at `path` and deletes its files; a file that is not a keychain is
    /// refused (`.invalidKeychain`) and left as it is.
    package func deleteKeychain(at path: String) throws(StoreError) {
        guard FileSecurity.fileSize(path) != nil else { throw StoreError(.noSuchKeychain, "no keychain at \(path)") }
        guard KeychainFile.isKeychain(path) else {
            throw StoreError(.invalidKeychain, "\(path) is not a keychain; it was not deleted")
        }
        open.withLock { $0[path] = nil }
        for suffix in ["", "-wal", "-shm"] { try FileSecurity.remove(path + suffix) }
    }

    /// Forgets every open keychain (their connections close when the last user lets go).
    package func closeAll() {
        open.withLock { $0.removeAll() }
    }
}
