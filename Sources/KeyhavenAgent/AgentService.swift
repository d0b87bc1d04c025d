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
            return AgentResponse(error: StoreError(.internalError, "an in-process request needed a prompt"))
        }
        return response
    }

    /// Answers one request; errors become the response's failure. A request naming another
    /// keychain home is refused. When an access check needs the user and the client may be
    /// asked, the question comes back instead (nothing has changed).
    package func respond(to request: AgentRequest, forHome requestedHome: String?, context: RequestContext) -> Outcome {
        if let requestedHome, requestedHome != home.path {
            return .response(AgentResponse(error: StoreError(.notAvailable, "this agent serves \(home.path), not \(requestedHome): "
                                                       + "stop it (keyhaven agent stop) or set KEYHAVEN_AGENT_SOCKET")))
        }
        do throws(StoreError) {
            let response = try handle(request, context)
            switch request {
            case .add, .update, .delete, .unlock, .administer, .setBound: onChange?()
            default: break
            }
            return .response(response)
        } catch {
            if let question = context.question.withLock({ $0 }), Self.interactionAllowed(request) {
                return .question(question, context, error)
            }
            return .response(AgentResponse(error: error))
        }
    }

    /// Whether the request's caller lets the agent prompt.
    static func interactionAllowed(_ request: AgentRequest) -> Bool {
        switch request {
        case .add(_, _, let caller), .find(_, _, let caller, _, _), .update(_, _, _, let caller), .delete(_, _, let caller, _),
             .keyOperation(_, _, let caller):
            return caller.interactionAllowed
        default: return false
        }
    }

    package func database(_ path: String) throws(StoreError) -> KeychainDatabase {
        if path == home.sessionKeychainPath { return try sessionKeychain.open(named: path) }
        return try registry.database(at: path, home: home, create: path == home.defaultKeychainPath)
    }

    private func handle(_ request: AgentRequest, _ context: RequestContext) throws(StoreError) -> AgentResponse {
        try SessionKeychain.refuse(request, sessionPath: home.sessionKeychainPath)
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
        case .add(let keychain, var item, let caller):
            let caller = try authorizedCaller(caller, context)
            try refuseReservedGroup(item.attributes, context)
            item.access = try resolved(item.access, context)
            try captureBiometrySet(&item, context)
            response.items = [try database(keychain).add(item, caller: caller)]
        case .find(let keychains, let query, let caller, let withSecrets, let withAttributes):
            let caller = try authorizedCaller(caller, context)
            var found = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: withSecrets)
            if withSecrets { found = try checkSecrets(found, caller: caller, context) }
            // A private key that is not extractable never leaves the agent, whatever is asked; a
            // password whose secret alone is asked for leaves without its attributes and access.
            response.items = found
                .map { found in
                    var item = found.item
                    if !StoredKeyOperation.isExtractable(item) { item.secret = nil }
                    if !withAttributes && item.itemClass.isPassword { item.attributes = [:]; item.access = nil }
                    return item
                }
        case .keyOperation(let keychains, let request, let caller):
            var query = ItemQuery(itemClass: request.reference.itemClass)
            query.persistentReference = request.reference
            query.limit = 1
            let caller = try authorizedCaller(caller, context)
            guard let found = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: true).first else {
                throw StoreError(.itemNotFound, "no key with that reference")
            }
            _ = try checkSecrets([found], caller: caller, context)
            if let enclaveKey = try Self.enclaveKey(found.item) {
                response.data = try performEnclave(request, key: enclaveKey)
            } else {
                response.data = try StoredKeyOperation.perform(request, on: found.item)
            }
        case .update(let keychains, let query, var changes, let caller):
            let caller = try authorizedCaller(caller, context)
            try refuseReservedGroup(changes.attributes, context)
            if changes.access != nil { changes.access = try resolved(changes.access, context) }
            response.count = try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
                guard let db = db as? KeychainDatabase else { throw StoreError(.internalError, "not a keychain of the agent's") }
                return try db.update(query, with: changes, caller: caller, authorize: writeAuthorization(for: db.path, context))
            }
        case .delete(let keychains, let query, let caller, let makeTombstones):
            let caller = try authorizedCaller(caller, context)
            response.count = try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
                guard let db = db as? KeychainDatabase else { throw StoreError(.internalError, "not a keychain of the agent's") }
                return try db.delete(query, caller: caller, makeTombstones: makeTombstones, authorize: writeAuthorization(for: db.path, context))
            }
        case .setAccess(let keychains, let query, let change, let password):
            response.count = try setAccess(in: try databases(keychains), query: query, change: change, password: password)
        case .grants(let change, let password):
            response.grants = try changeGrants(change, password: password)
        case .backup(let keychain, let destination, let password):
            // A backup is a copy that no TPM and no access list guards: only the administrator
            // programs ask for one (docs/tpm.md, "Backups").
            try context.requireAdministrator("only the keyhaven command and Keychain Access may back up a keychain")
            var secret = Array(password)
            defer { zeroize(&secret) }
            try database(keychain).backup(to: destination, password: secret)
        case .shutdown:
            // Any program of the user can signal the agent; none but the administrator programs
            // stops it by asking (docs/threat-model.md, "The buses").
            try context.requireAdministrator("only the keyhaven command and Keychain Access may stop the agent")
        case .echo(let data):
            response.data = data
        case .provideSecretService(let busAddress):
            // The agent trusts the bus it joins to name its clients' processes: only keyhavend
            // itself and the administrator programs choose it.
            guard context.client == nil || context.isAdministrator || isThisAgentsProgram(context) else {
                throw StoreError(.authFailed, "only keyhavend and the keyhaven command may ask the agent to provide the Secret Service")
            }
            try secretService.provide(busAddress: busAddress, owner: context.client.map(ObjectIdentifier.init))
            response.pid = getpid()
        case .tpmStatus:
            do throws(TPMError) {
                response.data = Data(try tpm.use { (connection) throws(TPMError) in try connection.status() }.wireBytes)
            } catch {
                throw error.storeError
            }
        case .createEnclaveKey:
            response.data = Data(try createEnclaveKey().wireBytes)
        case .enclaveKeyOperation(let key, let request):
            response.data = try performEnclave(request, key: key)
        case .setBound(let keychain, let password, let bound):
            var secret = password.map(Array.init) ?? []
            defer { zeroize(&secret) }
            try database(keychain).setBound(bound, password: secret)
        case .administer(let keychain, let reference, let password, let action):
            response.items = try administer(reference, in: try database(keychain), password: password, action: action, context)
        case .serveSSHAgent:
            // A request about the connection that carries it: AgentConnection answers it.
            throw StoreError(.invalidParameter, "an SSH agent is served on a connection of its own")
        case .sshUses(let revoke):
            // Where the user's keys went is the user's to read: only the administrator programs.
            try context.requireAdministrator("only the keyhaven command and Keychain Access may read or revoke the SSH agent's approvals")
            response.sshUses = try SSHAgentHost.report(sshApprovals, revoking: revoke)
        }
        return response
    }

    /// Whether the client runs this agent's own executable (verified by path, untampered).
    private func isThisAgentsProgram(_ context: RequestContext) -> Bool {
        guard let identity = context.identity else { return false }
        return !identity.isTampered && identity.isPathVerified && identity.path == ApplicationIdentityReader.currentPath
    }

    private func databases(_ paths: [String]) throws(StoreError) -> [any KeychainBackend] {
        try paths.map { (path) throws(StoreError) -> any KeychainBackend in try database(path) }
    }
}
