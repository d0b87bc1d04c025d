#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient
import KeyhavenTPM

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
    /// Asks the user when a program is not trusted with what it asks for.
    package let prompter: AccessPrompter
    /// The keyhaven command's programs beside this agent (the keychain's administration tools).
    let administratorPaths: Set<String>
    /// When each program last gave the password for an item that asks for the user's presence.
    let presence = PresenceLog()
    /// The Secret Service, when this agent provides it.
    package let secretService = SecretServiceHost()
    /// The TPM, connected on first use (docs/tpm.md).
    package let tpm = TPMHost()
    /// Biometry: fprintd on the system bus (docs/access.md).
    package let fingerprints: FingerprintReader
    /// The Secret Service's `session` collection, in memory.
    let sessionKeychain = SessionKeychain()
    /// The SSH agent's standing approvals and its keys' last uses, in memory.
    let sshApprovals = SSHApprovalStore()
    /// The background sync, for `keyhaven sync now`, `status` and `devices` (installed by keyhavend).
    package let sync = SyncHost()

    package init(home: KeychainHome, registry: KeychainRegistry = KeychainRegistry(), onChange: (@Sendable () -> Void)? = nil,
                 prompter: AccessPrompter = AccessPrompter(), fingerprints: FingerprintReader = FingerprintReader()) {
        self.home = home
        self.fingerprints = fingerprints
        self.registry = registry
        self.onChange = onChange
        self.prompter = prompter
        let folder = ApplicationIdentityReader.currentPath.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        administratorPaths = Set(["keyhaven", "keyhaven-pki", "keyhaven-sync", "keyhaven-access"].map { folder + "/" + $0 })
        // Keychains bound to the TPM open here, through this agent's connection to it.
        HardwareBinding.install(TPMSealer(tpm: tpm))
    }

    /// The answer to one request, or the question the user must answer first.
    package enum Outcome: Sendable {
        case response(AgentResponse)
        /// The question, who asks, and the error to answer when the user cannot be asked.
        case question(AccessQuestion, RequestContext, StoreError)
    }

    /// Who `client` is, for a request: its identity now (read again if it ran another program).
    package func context(for client: ClientProcess?) -> RequestContext {
        guard let client else { return .inProcess }
        return context(for: client, identity: client.identity())
    }

    /// Who `client` is, running the program `identity`.
    package func context(for client: ClientProcess, identity: ApplicationIdentity) -> RequestContext {
        RequestContext(client: client, identity: identity, isAdministrator: !identity.isTampered && identity.isPathVerified
                       && administratorPaths.contains(identity.path))
    }

    /// Tells the background sync that something changed (an unlock made outside ``respond``).
    package func onChangeNotify() { onChange?() }

    /// Who a Secret Service client on the session bus is (``RequestContext/findsEveryGroup``).
    package func busContext(for client: ClientProcess) -> RequestContext {
        RequestContext(client: client, identity: client.identity(), isAdministrator: false, findsEveryGroup: true)
    }

    /// Asks the user `question` for the client of `context` (blocking: a prompt thread's work);
    /// on an answer that allows, records it so that the request, run again, passes. Throws the
    /// prompt's failure (`.interactionNotAllowed` when no one can be asked).
    package func answer(_ question: AccessQuestion, context: RequestContext) throws {
        guard let client = context.client, let identity = context.identity else {
            throw StoreError(.interactionNotAllowed, "no client to ask")
        }
        let answer = try prompter.ask(question, client: client, identity: identity, database: try database(question.keychain))
        if answer == .alwaysAllow { try remember(question, for: identity) }
        switch question.subject {
        case .items(_, let references, _): client.allowOnce(items: references)
        case .groups(let groups): client.allowOnce(groups: groups)
        case .presence(let keychain, _):
            client.allowOnce(presence: keychain)
            presence.record(client: client, identity: identity, keychain: keychain)
        }
    }

    /// Answers one request made in the agent's own process (no access checks).
    package func respond(to request: AgentRequest, forHome requestedHome: String? = nil) -> AgentResponse {
        guard case .response(let response) = respond(to: request, forHome: requestedHome, context: .inProcess) else {
            return .failure(StoreError(.internalError, "an in-process request needed a prompt"))
        }
        return response
    }

    /// Answers one request; errors become the response's failure. A request naming another
    /// keychain home is refused. When an access check needs the user and the client may be
    /// asked, the question comes back instead (nothing has changed).
    package func respond(to request: AgentRequest, forHome requestedHome: String?, context: RequestContext) -> Outcome {
        if let requestedHome, requestedHome != home.path {
            return .response(.failure(StoreError(.notAvailable, "this agent serves \(home.path), not \(requestedHome): "
                                                 + "stop it (keyhaven agent stop) or set KEYHAVEN_AGENT_SOCKET")))
        }
        do throws(StoreError) {
            try admit(request, context)
            let answer = try handle(request, context)
            if request.cuesSync { onChange?() }
            return .response(.answer(answer))
        } catch {
            // The access checks record what they would ask where they fail: deep inside a write's
            // transaction, whose typed throws carry a StoreError and nothing else.
            if let question = context.question.withLock({ $0 }), request.caller?.interactionAllowed == true {
                return .question(question, context, error)
            }
            return .response(.failure(error))
        }
    }

    package func database(_ path: String) throws(StoreError) -> KeychainDatabase {
        if path == home.sessionKeychainPath { return try sessionKeychain.open(named: path) }
        return try registry.database(at: path, home: home, create: path == home.defaultKeychainPath)
    }

    /// One handler per request, each in the file of its concern; ``admit(_:_:)`` has run.
    private func handle(_ request: AgentRequest, _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        switch request {
        // The agent (AgentService+Agent.swift)
        case .hello: return .hello(home: home.path, pid: getpid())
        case .shutdown: return .done
        case .echo(let data): return .bytes(data)
        case .provideSecretService(let busAddress): return try provideSecretService(on: busAddress, context)
        case .serveSSHAgent:
            // A request about the connection that carries it: AgentConnection answers it.
            throw StoreError(.invalidParameter, "an SSH agent is served on a connection of its own")
        case .sshUses(let revoke): return .sshUses(try SSHAgentHost.report(sshApprovals, revoking: revoke))
        // Sync (SyncHost.swift)
        case .syncNow: return .syncRound(try sync.round())
        case .syncStatus(let staleAfter): return .syncStatus(try sync.status(staleAfter: staleAfter))
        case .syncDevices: return .syncDevices(try sync.devices())
        // Keychains (AgentService+Keychains.swift)
        case .create(let keychain, let password): return try create(keychain, password: password)
        case .deleteKeychain(let keychain): return try deleteKeychain(keychain)
        case .unlock(let keychain, let password): return try unlock(keychain, password: password)
        case .lock(let keychain): return try lock(keychain)
        case .status(let keychain): return .status(try database(keychain).status())
        case .changePassword(let keychain, let old, let new): return try changePassword(keychain, old: old, new: new)
        case .settings(let keychain): return .settings(try database(keychain).lockSettings())
        case .setSettings(let keychain, let settings): return try setSettings(keychain, settings)
        case .setBound(let keychain, let password, let bound): return try setBound(keychain, password: password, bound: bound)
        case .backup(let keychain, let destination, let password): return try backup(keychain, to: destination, password: password)
        // Items (AgentService+Items.swift)
        case .add(let keychain, let item, let caller): return try add(item, to: keychain, caller: caller, context)
        case .find(let keychains, let query, let caller, let withSecrets, let withAttributes):
            return try find(query, in: keychains, caller: caller, withSecrets: withSecrets, withAttributes: withAttributes, context)
        case .update(let keychains, let query, let changes, let caller):
            return try update(query, in: keychains, with: changes, caller: caller, context)
        case .delete(let keychains, let query, let caller, let makeTombstones):
            return try delete(query, in: keychains, caller: caller, makeTombstones: makeTombstones, context)
        case .keyOperation(let keychains, let operation, let caller): return try keyOperation(operation, in: keychains, caller: caller, context)
        // Access objects and grants (AgentService+Administration.swift)
        case .setAccess(let keychains, let query, let change, let password):
            return .count(try setAccess(in: try databases(keychains), query: query, change: change, password: password))
        case .grants(let change, let password): return .grants(try changeGrants(change, password: password))
        case .administer(let keychain, let reference, let password, let action):
            return try administer(reference, in: try database(keychain), password: password, action: action)
        // The TPM (AgentService+Enclave.swift)
        case .tpmStatus: return try tpmStatus()
        case .createEnclaveKey: return .enclaveKey(try createEnclaveKey())
        case .enclaveKeyOperation(let key, let operation): return .bytes(try performEnclave(operation, key: key))
        }
    }

    func databases(_ paths: [String]) throws(StoreError) -> [any KeychainBackend] {
        try paths.map { (path) throws(StoreError) -> any KeychainBackend in try database(path) }
    }
}
