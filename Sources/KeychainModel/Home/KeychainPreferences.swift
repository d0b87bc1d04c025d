#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import Synchronization

/// The default keychain and the search list of a keychain home, as macOS keeps them in the
/// user's preferences, and the keychains' display labels. Stored as JSON in
/// `<home>/preferences.json` (0600), replaced atomically.
package struct KeychainPreferences: Sendable, Codable, Equatable {
    /// The default keychain's path; nil: `<home>/login.keychain-db`.
    package var defaultKeychain: String?
    /// The keychains searched when a call names none; nil: just the default keychain.
    package var searchList: [String]?
    /// Display labels by keychain path, as a Secret Service client sets a collection's `Label`;
    /// a keychain without one is shown by its file's name (``label(of:)``).
    package var labels: [String: String]?

    package init(defaultKeychain: String? = nil, searchList: [String]? = nil) {
        self.defaultKeychain = defaultKeychain
        self.searchList = searchList
    }

    package static func path(_ home: KeychainHome) -> String { home.path + "/preferences.json" }

    /// The last preferences read, by file: every SecItem call asks for them, and a `stat` is
    /// cheaper than a read and a JSON parse. `save` replaces the file (a new inode), so a change by
    /// any process is seen at once.
    private static let cache = Mutex<[String: (FileSecurity.Stamp, KeychainPreferences)]>([:])

    package static func load(_ home: KeychainHome) throws(StoreError) -> KeychainPreferences {
        let path = path(home)
        guard let stamp = FileSecurity.stamp(path) else { return KeychainPreferences() }
        if let (cachedStamp, cached) = cache.withLock({ $0[path] }), cachedStamp == stamp { return cached }
        let preferences = try read(home)
        cache.withLock { $0[path] = (stamp, preferences) }
        return preferences
    }

    private static func read(_ home: KeychainHome) throws(StoreError) -> KeychainPreferences {
        guard var bytes = try FileSecurity.readSmallFile(path(home), maximum: 1 << 20) else { return KeychainPreferences() }
        defer { zeroize(&bytes) }
        do {
            return try JSONDecoder().decode(KeychainPreferences.self, from: Data(bytes))
        } catch {
            throw StoreError(.invalidKeychain, "\(path(home)) is not valid; fix or delete it")
        }
    }

    package func save(_ home: KeychainHome) throws(StoreError) {
        try home.prepare()
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            data = try encoder.encode(self)
        } catch {
            throw StoreError(.internalError, "cannot encode the preferences")
        }
        try FileSecurity.replace(Self.path(home), bytes: Array(data))
    }

    /// The name a keychain is shown by: its label, else its file's name without the extension.
    package func label(of path: String) -> String {
        if let label = labels?[path], !label.isEmpty { return label }
        return Self.fileName(path)
    }

    /// A keychain's file name without `.keychain-db` or `.keychain`.
    package static func fileName(_ path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        // The in-memory keychain (``KeychainHome/sessionKeychainPath``) is the `session` collection.
        if file == KeychainHome.sessionKeychainFile { return "session" }
        for ending in [".keychain-db", ".keychain"] where file.hasSuffix(ending) { return String(file.dropLast(ending.count)) }
        return file
    }

    /// Sets (or, empty or the file's name, removes) a keychain's label.
    package mutating func setLabel(_ label: String, of path: String) {
        var labels = self.labels ?? [:]
        labels[path] = label.isEmpty || label == Self.fileName(path) ? nil : label
        self.labels = labels.isEmpty ? nil : labels
    }

    /// The default keychain's path in `home`.
    package func defaultPath(_ home: KeychainHome) -> String { defaultKeychain ?? home.defaultKeychainPath }

    /// The search list in `home`.
    package func searchPaths(_ home: KeychainHome) -> [String] { searchList ?? [defaultPath(home)] }

    /// The search list without keychains whose file is gone (macOS passes over them); the login
    /// keychain stays, as it is created on first use (so its file is not looked at: a call
    /// through the agent makes one `stat` fewer).
    package func existingSearchPaths(_ home: KeychainHome) -> [String] {
        let login = home.defaultKeychainPath
        return searchPaths(home).filter { $0 == login || FileSecurity.fileSize($0) != nil }
    }
}
