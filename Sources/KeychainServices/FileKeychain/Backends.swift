import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient

/// The keychains calls work on: held by the agent when one runs for this keychain home (so an
/// unlock made with `keyhaven unlock-keychain` counts here too), else opened in this process.
/// `KEYHAVEN_AGENT=off|on|auto` chooses (docs/agent-protocol.md).
enum Backends {
    static func keychain(at path: String, home: KeychainHome, create: Bool) throws(StoreError) -> any KeychainBackend {
        if let socket = try AgentDiscovery.socket(for: home) { return AgentKeychain(path: path, socket: socket, home: home.path) }
        return try KeychainRegistry.shared.database(at: path, home: home, create: create)
    }

    static func defaultKeychain() throws(StoreError) -> any KeychainBackend {
        let home = try KeychainHome.current()
        let path = try KeychainPreferences.load(home).defaultPath(home)
        return try keychain(at: path, home: home, create: path == home.defaultKeychainPath)
    }

    /// The search list's keychains; ones whose file is gone are skipped, as macOS does.
    static func searchList() throws(StoreError) -> [any KeychainBackend] {
        let home = try KeychainHome.current()
        guard let socket = try AgentDiscovery.socket(for: home) else { return try KeychainRegistry.shared.searchList() }
        return try KeychainPreferences.load(home).existingSearchPaths(home).map { AgentKeychain(path: $0, socket: socket, home: home.path) }
    }

    static func create(at path: String, home: KeychainHome, password: [UInt8]) throws(StoreError) {
        if let socket = try AgentDiscovery.socket(for: home) {
            _ = try AgentClient(socket: socket, home: home.path).send(.create(keychain: path, password: password.isEmpty ? nil : Data(password)))
        } else {
            _ = try KeychainRegistry.shared.create(at: path, home: home, password: password)
        }
    }

    static func deleteKeychain(at path: String, home: KeychainHome) throws(StoreError) {
        if let socket = try AgentDiscovery.socket(for: home) {
            _ = try AgentClient(socket: socket, home: home.path).send(.deleteKeychain(keychain: path))
        } else {
            try KeychainRegistry.shared.deleteKeychain(at: path)
        }
    }

    static func lockAll() throws(StoreError) {
        let home = try KeychainHome.current()
        if let socket = try AgentDiscovery.socket(for: home) {
            _ = try AgentClient(socket: socket, home: home.path).send(.lock(keychain: nil))
        } else {
            KeychainRegistry.shared.lockAll()
        }
    }
}
