#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether a keychain home takes part in sync: the sync engine keeps a marker file
/// (`sync/member`, 0600, holding the account id) while it does, written when it creates or joins
/// an account and removed when it leaves or learns it was removed (KeyhavenSyncDevice). The
/// library reads it for `isSynchronizationAvailable` without opening the keychain.
package enum SyncMembership {
    package static func markerPath(_ home: KeychainHome) -> String { home.path + "/sync/member" }

    /// Whether `home` (the current one by default) syncs.
    package static func isMember(_ home: KeychainHome? = nil) -> Bool {
        guard let home = home ?? (try? KeychainHome.current()) else { return false }
        return access(markerPath(home), F_OK) == 0
    }
}
