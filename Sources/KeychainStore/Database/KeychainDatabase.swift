import Crypto
import Dispatch
import FoundationEssentials
import Synchronization

/// One open keychain file: its SQLite connection, its keys in memory and its lock state.
///
/// Thread-safe: every operation runs under one mutex, which guards the connection (SQLite
/// connections are single-threaded here), the keys and the lock state. Several processes may open
/// the same file: SQLite's locking (WAL, `BEGIN IMMEDIATE` for every write, a busy timeout) makes
/// one writer at a time and gives readers a consistent snapshot. Each process has its own lock
/// state, as each iPhone app process sees the same device lock.
package final class KeychainDatabase: Sendable {
    /// The file's path as it was opened.
    package let path: String
    /// The file's device and inode when it was opened, to notice a file replaced underneath us.
    let fileIdentity: FileIdentity?
    private let session: Mutex<Session>
    private let autoLockTimer = Mutex<(any DispatchSourceTimer)?>(nil)

    /// The state the mutex guards: one open keychain in this process.
    ///
    /// Invariants: `keys` were unwrapped from this connection's keybag at `epoch`; with no
    /// password every class key is in `keys`; with one, `ak`, `aku` and `akpu` are there only while
    /// unlocked, and `ck`, `cku` from the first unlock on. The lock state (``LockState``) and the
    /// TPM binding (``TPMBinding``) carry the keys that exist only in some states. When another
    /// process replaces the keys (a new `epoch`), ``refresh()`` drops every key the device key
    /// alone does not open, as after a restart.
    struct Session {
        let connection: SQLiteConnection
        let keychainID: Data
        var keys: UnlockedKeys
        /// The home's device key.
        let homeDeviceKey: SymmetricKey
        var binding: TPMBinding
        var lock: LockState
        var settings: LockSettings
        var lastUse: ContinuousClock.Instant
        /// The file's format (1 until migrated) and the epoch of the keys in memory.
        var format: Int64
        var epoch: Int64
        /// SQLite's `data_version` when this session last looked: another connection's commit changes it.
        var dataVersion: Int64?

        /// The key the device rows open with: the home's device key, joined with the TPM's secret
        /// for a bound keychain once that is unsealed.
        var deviceKey: SymmetricKey { binding.deviceKey ?? homeDeviceKey }

        /// The password's parameters; nil without a password.
        var kdf: PasswordKDF? { lock.kdf }

        /// The password's key, while unlocked with it.
        var passwordKey: SymmetricKey? { lock.passwordKey }
    }

    /// Limits on what one item may hold (documented in docs/file-format.md).
    package enum Limits {
        package static let secretBytes = 16 << 20
        package static let attributeBytes = 1 << 20
    }

    /// Opens the keychain at `path` (`.noSuchKeychain` if there is none). A keychain with a
    /// password opens locked.
    package convenience init(path: String, home: KeychainHome) throws(StoreError) {
        try self.init(path: path, opened: try KeychainFile.open(path: path, home: home), fileIdentity: FileIdentity(path: path))
    }

    /// A keychain without a password in this process's memory alone, named `path` (no file is
    /// there or made): gone when it is dropped (``KeychainFile/openInMemory()``).
    package convenience init(inMemoryNamed path: String) throws(StoreError) {
        try self.init(path: path, opened: try KeychainFile.openInMemory(), fileIdentity: nil)
    }

    private init(path: String, opened: sending Session, fileIdentity: FileIdentity?) throws(StoreError) {
        let settings = opened.settings
        let migrates = opened.format < KeychainSchema.formatVersion && opened.kdf == nil
        self.path = path
        self.fileIdentity = fileIdentity
        self.session = Mutex(opened)
        if settings.useLockInterval { scheduleAutoLock(settings) }
        // A format-1 keychain without a password has every key in memory now: migrate it. (One
        // with a password migrates at its first unlock.) A file this process cannot write stays
        // as it is and is read as format 1.
        if migrates {
            _ = try? withSession { session throws(StoreError) in try session.migrate() }
        }
    }

    deinit {
        autoLockTimer.withLock { $0?.cancel() }
    }

    /// Runs `body` with exclusive use of the connection and keys, after applying the auto-lock and
    /// following what other processes changed (``Session/refresh()``).
    func withSession<T: Sendable>(_ body: (inout Session) throws(StoreError) -> T) throws(StoreError) -> T {
        try session.withLock { (session: inout Session) throws(StoreError) -> T in try Self.use(&session, body) }
    }

    /// `body` on the locked session, after the auto-lock and what other processes changed.
    private static func use<T: Sendable>(_ session: inout Session, _ body: (inout Session) throws(StoreError) -> T) throws(StoreError) -> T {
        session.applyAutoLock()
        try session.refresh()
        defer { session.lastUse = .now }
        return try body(&session)
    }

    /// Runs SQLite's integrity check; returns its report ("ok" when the file is sound).
    package func integrityCheck() throws(StoreError) -> String {
        try withSession { session throws(StoreError) in
            try session.connection.prepare("PRAGMA integrity_check").rows().compactMap { $0.first?.text }.joined(separator: "\n")
        }
    }

    /// Applies the lock interval now, without counting as a use (the timer applies it every few
    /// seconds as well); whether it locked the keychain now.
    package func applyAutoLock() -> Bool {
        session.withLock { session in
            let wasUnlocked = session.lock.isUnlocked
            session.applyAutoLock()
            return wasUnlocked && !session.lock.isUnlocked
        }
    }

    /// Drops the locking classes' keys once the keychain has been idle for its lock interval,
    /// checked from a timer so that keys leave memory even when no call comes.
    func scheduleAutoLock(_ settings: LockSettings) {
        autoLockTimer.withLock { timer in
            timer?.cancel()
            timer = nil
            guard settings.useLockInterval else { return }
            let tick = max(1, min(30, Int(settings.lockInterval) / 10))
            let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            source.schedule(deadline: .now() + .seconds(tick), repeating: .seconds(tick), leeway: .milliseconds(200))
            source.setEventHandler { [weak self] in
                self?.session.withLock { $0.applyAutoLock() }
            }
            source.resume()
            timer = source
        }
    }
}

extension KeychainDatabase.Session {
    /// Locks once the lock interval has passed since the last call, or since the user went idle
    /// (``UserActivity``): Apple's "lock after N minutes of inactivity", where a program that
    /// keeps calling does not keep the keychain open for a user who has left.
    mutating func applyAutoLock() {
        guard case .unlocked = lock, settings.useLockInterval else { return }
        let interval = Duration.seconds(Int(settings.lockInterval))
        let now = ContinuousClock.now
        let userIdle = UserActivity.idleSince.map { now - $0 >= interval } ?? false
        guard now - lastUse >= interval || userIdle else { return }
        lockClasses()
    }

    /// Drops the keys that need the keychain unlocked (`ak`, `aku`, `akpu`); after-first-unlock
    /// keys stay until the process exits. A bound keychain with a password drops every key and
    /// the TPM's secret: nothing in it opens until its password unseals it again.
    mutating func lockClasses() {
        guard let kdf = lock.kdf else { return }
        if let seal = binding.seal {
            keys = UnlockedKeys([:], hasPassword: true)
            binding = .sealed(seal)
        }
        for keyClass in [KeyClass.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly] {
            keys.classes[keyClass] = nil
        }
        if case .unlocked = lock { lock = .locked(kdf) }
    }
}

/// A file's device and inode numbers.
struct FileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
}
