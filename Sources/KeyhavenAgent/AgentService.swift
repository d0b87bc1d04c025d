#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// What the agent does for each request: the embedded engine, for the agent's keychain home.
///
/// The agent's registry holds the open keychains, so an unlock lasts for every later client
/// until a lock, the auto-lock, or the agent's exit (the lock model's "reboot").
package struct AgentService: Sendable {
    package let home: KeychainHome
    let registry: KeychainRegistry
    /// Called after a request that may change what sync sees (a write, an unlock): the background
    /// sync's cue.
    let onChange: (@Sendable () -> Void)?

    package init(home: KeychainHome, registry: KeychainRegistry = KeychainRegistry(), onChange: (@Sendable () -> Void)? = nil) {
        self.home = home
        self.registry = registry
        self.onChange = onChange
    }

    /// Answers one request; errors become the response's failure. A request naming another
    /// keychain home is refused.
    package func respond(to request: AgentRequest, forHome requestedHome: String? = nil) -> AgentResponse {
        if let requestedHome, requestedHome != home.path {
            return AgentResponse(error: StoreError(.notAvailable, "this agent serves \(home.path), not \(requestedHome): "
                                                       + "stop it (keyhaven agent stop) or set KEYHAVEN_AGENT_SOCKET"))
        }
        do throws(StoreError) {
            let response = try handle(request)
            switch request {
            case .add, .update, .delete, .unlock: onChange?()
            default: break
            }
            return response
        } catch {
            return AgentResponse(error: error)
        }
    }

    private func database(_ path: String) throws(StoreError) -> KeychainDatabase {
        try registry.database(at: path, home: home, create: path == home.defaultKeychainPath)
    }

    private func handle(_ request: AgentRequest) throws(StoreError) -> AgentResponse {
        var response = AgentResponse()
        switch request {
        case .hello:
            response.home = home.path
            response.pid = getpid()
        case .create(let keychain, let password):
            _ = try registry.create(at: keychain, home: home, password: password.map(Array.init))
        case .deleteKeychain(let keychain):
            try registry.deleteKeychain(at: keychain)
        case .unlock(let keychain, let password):
            var secret = Array(password)
            defer { zeroize(&secret) }
            try database(keychain).unlock(password: secret)
        case .lock(let keychain):
            if let keychain { try database(keychain).lock() } else { registry.lockAll() }
        case .status(let keychain):
            response.status = try database(keychain).status()
        case .changePassword(let keychain, let old, let new):
            var (oldSecret, newSecret) = (Array(old), Array(new))
            defer { zeroize(&oldSecret); zeroize(&newSecret) }
            try database(keychain).changePassword(old: oldSecret, new: newSecret)
        case .settings(let keychain):
            response.settings = try database(keychain).lockSettings()
        case .setSettings(let keychain, let settings):
            try database(keychain).setLockSettings(settings)
        case .add(let keychain, let item, let caller):
            response.items = [try database(keychain).add(item, caller: caller)]
        case .find(let keychains, let query, let caller, let withSecrets):
            // A private key that is not extractable never leaves the agent, whatever is asked.
            response.items = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: withSecrets)
                .map { found in
                    var item = found.item
                    if !StoredKeyOperation.isExtractable(item) { item.secret = nil }
                    return item
                }
        case .keyOperation(let keychains, let request, let caller):
            var query = ItemQuery(itemClass: request.reference.itemClass)
            query.persistentReference = request.reference
            query.limit = 1
            guard let found = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: true).first else {
                throw StoreError(.itemNotFound, "no key with that reference")
            }
            response.data = try StoredKeyOperation.perform(request, on: found.item)
        case .update(let keychains, let query, let changes, let caller):
            response.count = try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
                try db.update(query, with: changes, caller: caller)
            }
        case .delete(let keychains, let query, let caller, let makeTombstones):
            response.count = try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
                try db.delete(query, caller: caller, makeTombstones: makeTombstones)
            }
        case .backup(let keychain, let destination):
            try database(keychain).backup(to: destination)
        case .shutdown:
            break
        }
        return response
    }

    private func databases(_ paths: [String]) throws(StoreError) -> [any KeychainBackend] {
        try paths.map { (path) throws(StoreError) -> any KeychainBackend in try database(path) }
    }
}
