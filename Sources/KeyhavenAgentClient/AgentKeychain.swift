#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import Synchronization

/// A keychain held by the agent: each call is one request, on an idle connection of
/// ``AgentConnectionPool`` or a new one (safe from any thread).
package struct AgentKeychain: KeychainBackend {
    package let path: String
    let socket: AgentSocket
    let home: String

    package init(path: String, socket: AgentSocket, home: String) {
        self.path = path
        self.socket = socket
        self.home = home
    }

    private func send(_ request: AgentRequest) throws(StoreError) -> AgentAnswer {
        try AgentConnectionPool.shared.send(request, socket: socket, home: home)
    }

    package func add(_ item: NewItem, caller: Caller) throws(StoreError) -> StoredItem {
        try send(.add(keychain: path, item: item, caller: caller)).item()
    }

    package func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool, withAttributes: Bool) throws(StoreError) -> [StoredItem] {
        try send(.find(keychains: [path], query: query, caller: caller, withSecrets: withSecrets, withAttributes: withAttributes)).items()
    }

    package func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller) throws(StoreError) -> Int {
        try send(.update(keychains: [path], query: query, changes: changes, caller: caller)).count()
    }

    package func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool) throws(StoreError) -> Int {
        try send(.delete(keychains: [path], query: query, caller: caller, makeTombstones: makeTombstones)).count()
    }

    package func currentStatus() throws(StoreError) -> KeychainStatus {
        try send(.status(keychain: path)).status()
    }

    package func unlock(password: [UInt8]) throws(StoreError) { _ = try send(.unlock(keychain: path, password: Data(password))) }
    package func lockKeychain() throws(StoreError) { _ = try send(.lock(keychain: path)) }
    package func changePassword(old: [UInt8], new: [UInt8]) throws(StoreError) {
        _ = try send(.changePassword(keychain: path, old: Data(old), new: Data(new)))
    }
    package func currentLockSettings() throws(StoreError) -> LockSettings { try send(.settings(keychain: path)).settings() }
    package func setLockSettings(_ settings: LockSettings) throws(StoreError) { _ = try send(.setSettings(keychain: path, settings: settings)) }
    package func backup(to destination: String, password: [UInt8]) throws(StoreError) {
        _ = try send(.backup(keychain: path, destination: destination, password: Data(password)))
    }

    /// Runs an operation with a key stored in this keychain, inside the agent; its result.
    package func keyOperation(_ request: KeyOperationRequest, caller: Caller) throws(StoreError) -> Data {
        try send(.keyOperation(keychains: [path], request: request, caller: caller)).bytes()
    }

    /// Makes a Secure Enclave key in the TPM the agent holds; nothing is stored.
    package func createEnclaveKey() throws(StoreError) -> EnclaveKeyData {
        try send(.createEnclaveKey).enclaveKey()
    }

    /// Runs an operation with a Secure Enclave key that no keychain holds, inside the agent.
    package func enclaveKeyOperation(_ request: KeyOperationRequest, key: EnclaveKeyData) throws(StoreError) -> Data {
        try send(.enclaveKeyOperation(key: key, request: request)).bytes()
    }
}

/// Whether library calls go to the agent: `KEYHAVEN_AGENT=off` never, `on` always (an error when
/// none runs), unset or `auto` when one runs for this keychain home.
///
/// Asked on every call, so an agent that starts or stops is followed at once: nothing to ask when
/// no socket file exists; no round trip while the connection that last said `hello` to this
/// agent is still open (the same agent process, known to serve this home); otherwise one `hello`.
package enum AgentDiscovery {
    /// The home each socket's agent said it serves, as long as its `hello` connection is open.
    private static let confirmed = Mutex<[String: String]>([:])

    /// The agent's socket to use for `home`, or nil for the embedded engine.
    package static func socket(for home: KeychainHome) throws(StoreError) -> AgentSocket? {
        let mode = environmentVariable("KEYHAVEN_AGENT") ?? "auto"
        guard mode != "off" else { return nil }
        let socket = AgentSocket.current()
        // No socket file, no agent: one stat, not a socket and a connect, on every call.
        if mode == "auto" && FileSecurity.fileSize(socket.path) == nil { return nil }
        if confirmed.withLock({ $0[socket.path] }) == home.path,
           AgentConnectionPool.shared.hasOpenIdleConnection(socket: socket, home: home.path) {
            return socket
        }
        // Said on a connection for this home, the one the calls then use: a process holds one
        // connection to the agent, not two (the agent serves at most 64 at once). An agent for
        // another home refuses it (`.notAvailable`, saying which it serves).
        do throws(StoreError) {
            let hello = try AgentConnectionPool.shared.send(.hello, socket: socket, home: home.path).hello()
            confirmed.withLock { $0[socket.path] = hello.home }
            if hello.home == home.path { return socket }
            if mode == "on" { throw StoreError(.notAvailable, "the agent at \(socket.path) serves another keychain home") }
            return nil
        } catch {
            confirmed.withLock { $0[socket.path] = nil }
            if mode == "on" { throw error }
            return nil
        }
    }
}
