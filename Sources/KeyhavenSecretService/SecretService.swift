#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import Synchronization
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// The freedesktop Secret Service (`org.freedesktop.secrets`, specification 0.2) over the
/// agent's keychains (docs/secret-service.md).
///
/// The bus thread reads each call and hands it to a worker; the worker does the keychain work
/// through ``AgentService`` (the same access checks as the agent's socket clients, prompts
/// included) and queues the answer back to the bus thread.
package final class SecretService: Sendable {
    let agent: AgentService
    let connection: BusConnection
    let workers = DispatchQueue(label: "keyhaven.secret-service", attributes: .concurrent)
    let state = Mutex(State())

    struct State {
        var sessions: [String: SecretSession] = [:]
        var prompts: [String: PendingPrompt] = [:]
        var clients: [String: ClientProcess] = [:]
        var nextID = 1
    }

    /// What a prompt does when the client calls its Prompt method.
    struct PendingPrompt: Sendable {
        let owner: String
        /// Keychains to unlock, and the objects to report unlocked.
        let keychains: [String]
        let objects: [String]
    }

    package init(agent: AgentService, connection: BusConnection) {
        self.agent = agent
        self.connection = connection
    }

    /// Claims the name and registers the objects. Throws `.duplicateItem` when another provider
    /// owns the name (gnome-keyring, KeePassXC), `.notAvailable` without a session bus.
    package func start() throws(StoreError) {
        try checkDaemon()
        guard try connection.claim(SecretServiceNames.busName) else {
            throw StoreError(.duplicateItem, "another program already provides \(SecretServiceNames.busName) on this session bus; "
                             + "stop it (gnome-keyring-daemon, KeePassXC) or run keyhavend without --secret-service")
        }
        try connection.serve(SecretObject.root, onCall: { [self] call in handle(call) }, onClientAppeared: { [self] name, pid in
            // Pinned as it appears, before it can call: what it runs later is checked against this.
            let client = ClientProcess(pid: pid, pidfd: ClientProcess.openPidfd(pid))
            state.withLock { $0.clients[name] = client }
        }, onClientGone: { [self] name in
            state.withLock { state in
                state.clients[name] = nil
                state.sessions = state.sessions.filter { $0.value.owner != name }
                state.prompts = state.prompts.filter { $0.value.owner != name }
            }
        })
        // The Secret portal's backend, on the same name (docs/secret-service.md, "The Secret portal").
        try connection.serveAlso(SecretPortal.path)
    }

    /// Refuses a bus whose daemon is not a genuine dbus-daemon or dbus-broker of this user's (or
    /// root's): the bus names each caller's process, and a daemon of a program's own making could
    /// name a trusted program's (docs/threat-model.md, "The buses").
    func checkDaemon() throws(StoreError) {
        if let why = SystemProgram.busDaemonRefusal(connection) {
            throw StoreError(.notAvailable, "\(why); the Secret Service is not provided")
        }
    }

    /// The object at `path`, with the alias `default` naming the default keychain as it is now.
    func resolve(_ path: String) -> SecretObject? {
        SecretObject.resolve(path, home: agent.home, defaultKeychain: SecretObject.defaultKeychain(of: agent.home))
    }

    /// Serves the bus until it goes away or ``stop()``; blocks (a thread of its own).
    package func serve() { connection.run() }

    package func stop() { connection.stop() }

    /// On the bus thread: the standard interfaces, then the Secret Service's, on a worker.
    private func handle(_ call: BusCall) {
        guard let arguments = call.arguments else {
            call.fail(.invalidArguments("the arguments could not be read"))
            return
        }
        // Who owns the portal's frontend name is read here, on the bus thread, as the call comes.
        let portal = call.path == SecretPortal.path
        let fromFrontend = portal && connection.owner(of: SecretPortal.frontend) == call.sender
        workers.async { [self] in
            do throws(BusError) {
                let (values, sensitive) = portal ? try portalMethod(Method(call: call, arguments: arguments), fromFrontend: fromFrontend)
                    : try dispatch(call, arguments)
                call.reply(values, sensitive: sensitive)
            } catch {
                call.fail(error)
            }
        }
    }

    /// The keychain calls run here, on a worker thread.
    private func dispatch(_ call: BusCall, _ arguments: [BusValue]) throws(BusError) -> ([BusValue], Bool) {
        if let children = folderChildren(call.path) {
            // The folders the root lists answer introspection, so busctl tree and d-spy walk down.
            try Method(call: call, arguments: arguments).expect("org.freedesktop.DBus.Introspectable", "Introspect", "")
            return ([.string(Introspection.document(interfaces: [Introspection.introspectable], children: children))], false)
        }
        guard let object = resolve(call.path) else {
            // The spec's name for a collection, alias or item that is not there; any other path
            // is no object of the Secret Service's at all.
            let secretObject = [SecretObject.collectionPrefix, SecretObject.aliasPrefix, SecretObject.promptPrefix]
                .contains { call.path.hasPrefix($0) }
            throw secretObject ? .noSuchObject(call.path) : .unknownObject(call.path)
        }
        let method = Method(call: call, arguments: arguments)
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return ([.string(try introspect(object, call: call))], false)
        case ("org.freedesktop.DBus.Properties", _):
            return (try properties(object, method), false)
        default:
            break
        }
        switch object {
        case .service: return try serviceMethod(method)
        case .collection(let keychain, let path): return try collectionMethod(method, keychain: keychain, path: path)
        case .item(let keychain, let collection, let reference, let path):
            return try itemMethod(method, keychain: keychain, collection: collection, reference: reference, path: path)
        case .session(let path):
            // A session is its opener's: to any other client it does not exist.
            guard state.withLock({ $0.sessions[path] })?.owner == call.sender else { throw .noSession }
            try method.expect("org.freedesktop.Secret.Session", "Close", "")
            state.withLock { $0.sessions[path] = nil }
            return ([], false)
        case .prompt(let path):
            return try promptMethod(method, path: path)
        }
    }

    /// The child nodes of `/org/freedesktop/secrets/collection` (every collection) and of
    /// `/org/freedesktop/secrets/aliases` (the aliases); nil for any other path.
    func folderChildren(_ path: String) -> [String]? {
        switch path {
        case String(SecretObject.collectionPrefix.dropLast()):
            return keychains().map { String(SecretObject.collectionPath(for: $0).dropFirst(SecretObject.collectionPrefix.count)) }
        case String(SecretObject.aliasPrefix.dropLast()):
            return ["default", "login", SecretObject.sessionName]
        default:
            return nil
        }
    }

    // MARK: - Who is calling

    /// The request context of the call's sender: its process, pinned when its name appeared on
    /// the bus and identified as the agent identifies socket clients (docs/access.md). A sender
    /// never seen appearing (its name's signal still on its way) is pinned now.
    func context(_ call: BusCall) throws(BusError) -> RequestContext {
        if let known = state.withLock({ $0.clients[call.sender] }) {
            guard known.isAlive else { throw .accessDenied("the process that connected as \(call.sender) has exited") }
            return agent.busContext(for: known)
        }
        guard let pid = call.senderPID else { throw .accessDenied("the bus does not say which process is calling") }
        let client = ClientProcess(pid: pid, pidfd: ClientProcess.openPidfd(pid))
        state.withLock { $0.clients[call.sender] = client }
        return agent.busContext(for: client)
    }

    /// A D-Bus client's caller: its own application group for what it creates, every group to
    /// find (the Secret Service has no groups; docs/secret-service.md).
    static let caller = Caller(accessGroups: [Caller.applicationGroupMarker, "*"])

    /// Runs an agent request as the call's sender; asks the user when an access check needs it
    /// (up to four questions), as the agent does for its socket clients; throws what the agent
    /// answered as an error.
    @discardableResult
    func perform(_ request: AgentRequest, _ context: RequestContext) throws(BusError) -> AgentAnswer {
        let response = try respond(request, context)
        do throws(StoreError) { return try response.get() } catch { throw BusError(error) }
    }

    /// The items a `find` answers, as the request's sender.
    func find(_ request: AgentRequest, _ context: RequestContext) throws(BusError) -> [StoredItem] {
        let answer = try perform(request, context)
        do throws(StoreError) { return try answer.items() } catch { throw BusError(error) }
    }

    /// ``perform(_:_:)`` that returns the agent's answer, error included, for a caller that
    /// tells one error from another.
    func respond(_ request: AgentRequest, _ context: RequestContext) throws(BusError) -> AgentResponse {
        // What a prompt allows holds for this request's later rounds, so it is cleared once.
        context.client?.beginRequest()
        for _ in 0..<5 {
            switch agent.respond(to: request, forHome: nil, context: context) {
            case .response(let response):
                return response
            case .question(let question, let asked, let unasked):
                do {
                    try agent.answer(question, context: asked)
                } catch let error as StoreError {
                    throw BusError(error.code == .interactionNotAllowed ? unasked : error)
                } catch {
                    throw .accessDenied("the prompt failed")
                }
            }
        }
        throw .accessDenied("too many prompts for one request")
    }

    /// Sends a signal (from any thread).
    func emit(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
        connection.perform { $0.emit(path: path, interface: interface, member: member, values) }
    }

    func newObjectPath(_ prefix: String, letter: String) -> String {
        state.withLock { state in
            defer { state.nextID += 1 }
            return prefix + letter + String(state.nextID)
        }
    }
}

/// One call's member and arguments, with the checks every method makes.
struct Method {
    let call: BusCall
    let arguments: [BusValue]

    var interface: String { call.interface }
    var member: String { call.member }
    var signature: String { arguments.map(\.signature).joined() }

    /// Whether this is `interface.member`: an empty interface matches (the spec allows calls
    /// without one); a wrong signature is InvalidArgs.
    func `is`(_ interface: String, _ member: String, _ signature: String) throws(BusError) -> Bool {
        guard self.member == member, self.interface.isEmpty || self.interface == interface else { return false }
        guard self.signature == signature else {
            throw .invalidArguments("\(interface).\(member) takes (\(signature)), not (\(self.signature))")
        }
        return true
    }

    func expect(_ interface: String, _ member: String, _ signature: String) throws(BusError) {
        guard try `is`(interface, member, signature) else { throw unknown }
    }

    var unknown: BusError { .unknownMethod(interface, member, signature) }
}
