import Crypto
import FoundationEssentials
import Synchronization

/// One open keychain file: its SQLite connection and its unlocked keys.
///
/// Thread-safe: every operation runs under one mutex, which guards the connection (SQLite
/// connections are single-threaded here) and the keys. Several processes may open the same
/// file: SQLite's locking (WAL, `BEGIN IMMEDIATE` for every write, a busy timeout) makes one
/// writer at a time and gives readers a consistent snapshot.
package final class KeychainDatabase: Sendable {
    /// The file's path as it was opened.
    package let path: String
    /// The file's device and inode when it was opened, to notice a file replaced underneath us.
    let fileIdentity: FileIdentity?
    private let session: Mutex<Session>

    /// The state the mutex guards. Invariant: `keys` were unwrapped from this connection's keybag.
    struct Session {
        let connection: SQLiteConnection
        let keychainID: Data
        var keys: UnlockedKeys
    }

    /// Limits on what one item may hold (documented in docs/file-format.md).
    package enum Limits {
        package static let secretBytes = 16 << 20
        package static let attributeBytes = 1 << 20
    }

    package init(path: String, home: KeychainHome, create: Bool) throws(StoreError) {
        let opened = try KeychainFile.open(path: path, home: home, create: create)
        self.path = path
        self.fileIdentity = FileIdentity(path: path)
        self.session = Mutex(Session(connection: opened.connection, keychainID: opened.keychainID, keys: opened.keys))
    }

    /// Runs `body` with exclusive use of the connection and keys.
    func withSession<T: Sendable>(_ body: (inout Session) throws(StoreError) -> T) throws(StoreError) -> T {
        try session.withLock { (session: inout Session) throws(StoreError) -> T in try body(&session) }
    }

    /// Runs SQLite's integrity check; returns its report ("ok" when the file is sound).
    package func integrityCheck() throws(StoreError) -> String {
        try withSession { session throws(StoreError) in
            try session.connection.prepare("PRAGMA integrity_check").rows().compactMap { $0.first?.text }.joined(separator: "\n")
        }
    }
}

/// A file's device and inode numbers.
struct FileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
}
