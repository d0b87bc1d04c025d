import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// The keychain commands of Keychain Access's File menu, as `keyhaven`'s keychain subcommands do
/// them: the agent changes the file, the search list and the default live in the preferences.
extension KeychainAccessSession {
    /// Creates the keychain `name` in the keychain home (nil or empty password: none) and adds it
    /// to the search list; its path.
    package func createKeychain(named name: String, password: [UInt8]?) throws(StoreError) -> String {
        let trimmed = name.trimmed
        guard !trimmed.isEmpty, !trimmed.contains("/"), !trimmed.hasPrefix(".") else {
            throw StoreError(.invalidParameter, "A keychain's name is not empty, has no slash and does not start with a dot.")
        }
        let path = session.home.keychainPath(for: trimmed, relativeTo: session.home.path)
        guard FileSecurity.fileSize(path) == nil else { throw StoreError(.duplicateKeychain, "A keychain named \"\(trimmed)\" exists.") }
        try session.send(.create(keychain: path, password: password.flatMap { $0.isEmpty ? nil : Data($0) }))
        var preferences = try KeychainPreferences.load(session.home)
        var list = preferences.searchPaths(session.home)
        if !list.contains(path) { list.append(path) }
        preferences.searchList = list
        try preferences.save(session.home)
        return path
    }

    /// Deletes the keychain at `path` and takes it out of the search list (and out of the
    /// default, which falls back to the login keychain).
    package func deleteKeychain(_ path: String) throws(StoreError) {
        try session.send(.deleteKeychain(keychain: path))
        var preferences = try KeychainPreferences.load(session.home)
        preferences.searchList = preferences.searchList?.filter { $0 != path }
        if preferences.defaultKeychain == path { preferences.defaultKeychain = nil }
        try preferences.save(session.home)
    }

    /// Makes `path` the default keychain: where new items go.
    package func makeDefault(_ path: String) throws(StoreError) {
        var preferences = try KeychainPreferences.load(session.home)
        preferences.defaultKeychain = path == session.home.defaultKeychainPath ? nil : path
        try preferences.save(session.home)
    }

    /// Changes (or sets, `old` empty, or removes, `new` empty) the keychain's password.
    package func changePassword(_ path: String, old: [UInt8], new: [UInt8]) throws(StoreError) {
        try session.send(.changePassword(keychain: path, old: Data(old), new: Data(new)))
    }

    package func settings(_ path: String) throws(StoreError) -> LockSettings {
        try session.send(.settings(keychain: path)).settings()
    }

    package func setSettings(_ path: String, _ settings: LockSettings) throws(StoreError) {
        try session.send(.setSettings(keychain: path, settings: settings))
    }
}
