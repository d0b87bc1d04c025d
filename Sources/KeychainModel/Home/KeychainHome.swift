#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// The folder that holds a user's keychains and their device key.
///
/// `$KEYHAVEN_HOME`, else `$XDG_DATA_HOME/keyhaven`, else `~/.local/share/keyhaven`. Created 0700
/// on first use; the device key lives in its `private/` folder (0700), file 0600.
package struct KeychainHome: Sendable, Hashable {
    package let path: String

    package init(path: String) { self.path = path }

    /// The home the environment selects, read anew on every call so a test can point each
    /// case at its own folder.
    package static func current() throws(StoreError) -> KeychainHome {
        if let home = environmentVariable("KEYHAVEN_HOME"), !home.isEmpty { return KeychainHome(path: home) }
        if let data = environmentVariable("XDG_DATA_HOME"), data.hasPrefix("/") { return KeychainHome(path: data + "/keyhaven") }
        guard let user = environmentVariable("HOME"), !user.isEmpty else {
            throw StoreError(.notAvailable, "no keychain home: set KEYHAVEN_HOME, XDG_DATA_HOME or HOME")
        }
        return KeychainHome(path: user + "/.local/share/keyhaven")
    }

    /// A keychain argument as a path: with a slash, a path (made absolute against `directory`);
    /// without, a name in the home, given the `.keychain-db` ending if it has no ending of its own.
    package func keychainPath(for name: String, relativeTo directory: String) -> String {
        if name.contains("/") { return name.hasPrefix("/") ? name : directory + "/" + name }
        if name.hasSuffix(".keychain-db") { return path + "/" + name }
        if name.hasSuffix(".keychain") { return path + "/" + name + "-db" }
        return path + "/" + name + ".keychain-db"
    }

    /// The default keychain's file, `login.keychain-db`.
    package var defaultKeychainPath: String { path + "/login.keychain-db" }
    /// The name of the keychain the Secret Service's `session` collection is: one in the agent's
    /// memory alone (docs/secret-service.md). No file is ever read or made at this path.
    package var sessionKeychainPath: String { path + "/" + Self.sessionKeychainFile }
    package static let sessionKeychainFile = ".session-keychain"
    package var privateFolder: String { path + "/private" }
    package var deviceKeyPath: String { privateFolder + "/device.key" }

    /// Creates the home (and its parents) if needed and makes sure only the owner can enter it.
    package func prepare() throws(StoreError) {
        try FileSecurity.ensurePrivateDirectory(path)
        try FileSecurity.ensurePrivateDirectory(privateFolder)
    }
}

/// An environment variable's value, read now (tests change them between calls); nil when unset.
package func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
