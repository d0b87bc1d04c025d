import CSQLite
import CSQLiteFaults
import KeychainModel
import KeychainStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Injected I/O faults under SQLite, for the reliability and sync tests (docs/reliability.md).
///
/// The VFS is registered with the process's SQLite, which the engine shares: the engine itself
/// does not link it.
///
/// ``install()`` makes a forwarding VFS SQLite's default, so connections opened afterwards go
/// through it; ``arm(_:under:skip:times:code:)`` then makes chosen calls on files in one folder
/// fail, the way a full disk or a failing device would, until ``disarm()``.
package enum SQLiteFaults {
    /// The I/O calls a fault applies to.
    package struct Operations: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let read = Operations(rawValue: Int32(KEYHAVEN_FAULT_READ))
        package static let write = Operations(rawValue: Int32(KEYHAVEN_FAULT_WRITE))
        package static let sync = Operations(rawValue: Int32(KEYHAVEN_FAULT_SYNC))
        package static let truncate = Operations(rawValue: Int32(KEYHAVEN_FAULT_TRUNCATE))
    }

    /// What a failed call reports, as the unix VFS would.
    package enum Failure: Sendable {
        /// The device is full (a short write: SQLITE_FULL).
        case diskFull
        /// The call failed (SQLITE_IOERR with the extended code of the call).
        case ioError

        func code(for operations: Operations) -> Int32 {
            switch self {
            case .diskFull: return SQLITE_FULL
            case .ioError:
                // SQLITE_IOERR_READ, _WRITE, _FSYNC, _TRUNCATE (macros Swift cannot import).
                if operations == .read { return SQLITE_IOERR | (1 << 8) }
                if operations == .write { return SQLITE_IOERR | (3 << 8) }
                if operations == .sync { return SQLITE_IOERR | (4 << 8) }
                if operations == .truncate { return SQLITE_IOERR | (6 << 8) }
                return SQLITE_IOERR
            }
        }
    }

    /// Registers the fault VFS as SQLite's default (once). Close open keychains afterwards
    /// (``KeychainRegistry/closeAll()``) so that they reopen through it.
    package static func install() throws(StoreError) {
        let rc = keyhaven_faults_install()
        guard rc == SQLITE_OK else { throw SQLiteConnection.error(rc, "cannot register the fault VFS") }
    }

    /// Of the `operations` calls on files whose path starts with `folder`, lets `skip` succeed,
    /// then fails `times` of them (every one while armed if nil) with `failure`. The folder is
    /// compared in its canonical form, as SQLite names files.
    package static func arm(_ operations: Operations, under folder: String, skip: Int, times: Int? = nil, failure: Failure) {
        var canonical = folder
        if let resolved = realpath(folder, nil) {
            canonical = String(cString: resolved)
            free(resolved)
        }
        if !canonical.hasSuffix("/") { canonical += "/" }
        keyhaven_faults_arm(operations.rawValue, canonical, skip, times ?? -1, failure.code(for: operations))
    }

    /// Every call succeeds again.
    package static func disarm() { keyhaven_faults_disarm() }

    /// How many calls the fault armed last has failed.
    package static var triggered: Int { keyhaven_faults_triggered() }
}
