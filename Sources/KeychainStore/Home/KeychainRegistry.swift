import FoundationEssentials
import Synchronization

/// The keychains this process has open, one ``KeychainDatabase`` per file.
///
/// Opening is serialized; a cached database whose file was deleted or replaced is reopened.
package final class KeychainRegistry: Sendable {
    package static let shared = KeychainRegistry()

    private let open = Mutex<[String: KeychainDatabase]>([:])

    package init() {}

    /// The default keychain of the current keychain home, created on first use.
    package func defaultKeychain() throws(StoreError) -> KeychainDatabase {
        let home = try KeychainHome.current()
        return try database(at: home.defaultKeychainPath, home: home, create: true)
    }

    /// The keychain at `path`, opened once and then shared.
    package func database(at path: String, home: KeychainHome, create: Bool) throws(StoreError) -> KeychainDatabase {
        try open.withLock { (open: inout [String: KeychainDatabase]) throws(StoreError) -> KeychainDatabase in
            if let cached = open[path], cached.fileIdentity != nil, cached.fileIdentity == FileIdentity(path: path) {
                return cached
            }
            let database = try KeychainDatabase(path: path, home: home, create: create)
            open[path] = database
            return database
        }
    }

    /// Forgets every open keychain (their connections close when the last user lets go).
    package func closeAll() {
        open.withLock { $0.removeAll() }
    }
}
