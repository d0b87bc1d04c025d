#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// What a program of the user's needs of the agent (every `keyhaven` subcommand, Keychain
/// Access): the keychain home, the agent (started on first need), and how names become keychain
/// paths.
package struct AgentSession {
    package let home: KeychainHome
    package let socket: AgentSocket
    /// The command's access groups: `KEYHAVEN_ACCESS_GROUPS`, else `keyhaven` (where adds go)
    /// and `*` (every group's items, as macOS's command sees every item of the user's keychains).
    package let caller: Caller

    /// Connects to the agent of this process's keychain home, starting it when none runs.
    package static func connect() throws(StoreError) -> AgentSession {
        let home = try KeychainHome.current()
        let socket = AgentSocket.current()
        // The connection that found (or started) the agent carries this command's requests too.
        AgentConnectionPool.shared.keep(try AgentLauncher.connect(home: home), socket: socket, home: home.path)
        let groups = environmentVariable("KEYHAVEN_ACCESS_GROUPS")?
            .split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        return AgentSession(home: home, socket: socket, caller: Caller(accessGroups: groups ?? ["keyhaven", "*"]))
    }

    package func preferences() throws(StoreError) -> KeychainPreferences { try KeychainPreferences.load(home) }

    /// A keychain argument's path; nil: the default keychain.
    package func path(_ name: String?) throws(StoreError) -> String {
        guard let name else { return try preferences().defaultPath(home) }
        return home.keychainPath(for: name, relativeTo: FileManager.default.currentDirectoryPath)
    }

    /// The keychains a search covers: the arguments, else the search list.
    package func searchPaths(_ names: [String]) throws(StoreError) -> [String] {
        if names.isEmpty { return try preferences().existingSearchPaths(home) }
        var paths: [String] = []
        for name in names { paths.append(try path(name)) }
        return paths
    }

    /// The agent's keychains at `paths`, for ``KeychainSearch``.
    package func keychains(_ paths: [String]) -> [any KeychainBackend] {
        paths.map { AgentKeychain(path: $0, socket: socket, home: home.path) }
    }

    /// The items of the keychain at `path` that `query` matches, `[]` when none does; every other
    /// failure (a keychain that stays locked, a refusal, the agent gone) is thrown, so a caller
    /// never takes "could not look" for "nothing there".
    package func items(matching query: ItemQuery, in path: String, caller: Caller? = nil, withSecrets: Bool) throws(StoreError) -> [StoredItem] {
        do {
            return try send(.find(keychains: [path], query: query, caller: caller ?? self.caller, withSecrets: withSecrets)).items()
        } catch where error.code == .itemNotFound {
            return []
        }
    }

    @discardableResult
    package func send(_ request: AgentRequest) throws(StoreError) -> AgentAnswer {
        try AgentConnectionPool.shared.send(request, socket: socket, home: home.path)
    }
}
