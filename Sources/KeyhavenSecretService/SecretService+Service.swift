import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// `org.freedesktop.Secret.Service` on `/org/freedesktop/secrets`.
extension SecretService {

    func serviceMethod(_ method: Method) throws(BusError) -> ([BusValue], Bool) {
        let a = method.arguments
        let i = SecretServiceNames.serviceInterface
        if try method.is(i, "OpenSession", "sv") {
            return (try openSession(method.call, algorithm: a[0].stringValue ?? "", input: a[1]), false)
        }
        if try method.is(i, "SearchItems", "a{ss}") {
            let wanted = try a[0].searchAttributes()
            let context = try context(method.call)
            var unlocked: [String] = [], locked: [String] = []
            for keychain in keychains() {
                let collection = SecretObject.collectionPath(for: keychain)
                if isLocked(keychain) {
                    locked += lockedItemPaths(in: keychain, collection: collection, matching: wanted)
                } else {
                    unlocked += try items(in: keychain, matching: wanted, context)
                        .compactMap { SecretObject.itemPath(collection: collection, reference: $0.persistentReference) }
                }
            }
            return ([.paths(unlocked), .paths(locked)], false)
        }
        if try method.is(i, "Unlock", "ao") {
            return (try unlock(method.call, objects: a[0].pathsValue ?? []), false)
        }
        if try method.is(i, "Lock", "ao") {
            var locked: [String] = []
            var done: Set<String> = []
            for path in a[0].pathsValue ?? [] {
                guard let keychain = keychain(of: path) else { continue }
                if !done.contains(keychain), case .answer(.status(let status)) = agent.respond(to: .status(keychain: keychain)), status.hasPassword {
                    _ = agent.respond(to: .lock(keychain: keychain))
                    done.insert(keychain)
                    announceLock(of: keychain, locked: true)
                }
                if done.contains(keychain) { locked.append(path) }
            }
            return ([.paths(locked), .objectPath("/")], false)
        }
        if try method.is(i, "GetSecrets", "aoo") {
            let context = try context(method.call)
            let session = try session(a[1].stringValue ?? "", for: method.call)
            var pairs: [BusValue.Pair] = []
            for path in a[0].pathsValue ?? [] {
                guard case .item(let keychain, _, let reference, _)? = resolve(path),
                      !isLocked(keychain),
                      let item = try? item(reference, in: keychain, withSecret: true, context, path: path) else { continue }
                pairs.append(BusValue.Pair(.objectPath(path), try session.encode(item.secret ?? Data(), contentType: Self.contentType(item))))
            }
            return ([.dictionary(key: "o", value: "(oayays)", pairs)], true)
        }
        if try method.is(i, "ReadAlias", "s") {
            let name = a[0].stringValue ?? ""
            guard let keychain = aliased(name) else { return ([.objectPath("/")], false) }
            return ([.objectPath(SecretObject.aliasTarget(name, keychain: keychain, home: agent.home))], false)
        }
        if try method.is(i, "SetAlias", "so") {
            let name = a[0].stringValue ?? "", target = a[1].stringValue ?? ""
            guard let current = aliased(name), keychain(of: target) == current else {
                throw .notSupported("the alias default names the default keychain (set it with keyhaven default-keychain -s), "
                                    + "the alias login the login keychain, the alias session the in-memory collection")
            }
            return ([], false)
        }
        if try method.is(i, "CreateCollection", "a{sv}s") {
            return (try createCollection(method.call, properties: a[0].propertiesValue ?? [:], alias: a[1].stringValue ?? ""), false)
        }
        throw method.unknown
    }

    /// The keychain an alias names now: `default` the default keychain, `login` the login one.
    func aliased(_ name: String) -> String? {
        switch name {
        case "default": SecretObject.defaultKeychain(of: agent.home)
        case "login": agent.home.defaultKeychainPath
        case SecretObject.sessionName: agent.home.sessionKeychainPath
        default: nil
        }
    }

    /// The keychain of a collection or item path.
    func keychain(of path: String) -> String? {
        switch resolve(path) {
        case .collection(let keychain, _)?, .item(let keychain, _, _, _)?: keychain
        default: nil
        }
    }

    /// The caller's own session at `path`.
    func session(_ path: String, for call: BusCall) throws(BusError) -> SecretSession {
        guard let session = state.withLock({ $0.sessions[path] }), session.owner == call.sender else { throw .noSession }
        return session
    }

    private func openSession(_ call: BusCall, algorithm: String, input: BusValue) throws(BusError) -> [BusValue] {
        let path = newObjectPath(SecretObject.sessionPrefix, letter: "s")
        let session: SecretSession
        let output: BusValue
        switch algorithm {
        case SecretSession.plainAlgorithm:
            session = .plain(path: path, owner: call.sender)
            output = .string("")
        case SecretSession.dhAlgorithm:
            guard let key = input.bytesValue else { throw .invalidArguments("the input of \(algorithm) is the client's public key (ay)") }
            let (negotiated, ours) = try SecretSession.negotiate(path: path, owner: call.sender, clientPublicKey: key)
            session = negotiated
            output = .bytes(ours)
        default:
            throw .notSupported("the algorithm \(algorithm) is not supported (plain, \(SecretSession.dhAlgorithm))")
        }
        state.withLock { $0.sessions[path] = session }
        return [.variant(output), .objectPath(path)]
    }

    /// Objects already unlocked come back at once; locked collections' password is asked for
    /// by a prompt the client then calls.
    private func unlock(_ call: BusCall, objects: [String]) throws(BusError) -> [BusValue] {
        var unlocked: [String] = [], pending: [String] = [], keychainsToUnlock: [String] = []
        for path in objects {
            guard let keychain = keychain(of: path) else { continue }
            if isLocked(keychain) {
                pending.append(path)
                if !keychainsToUnlock.contains(keychain) { keychainsToUnlock.append(keychain) }
            } else {
                unlocked.append(path)
            }
        }
        guard !keychainsToUnlock.isEmpty else { return [.paths(unlocked), .objectPath("/")] }
        let prompt = newObjectPath(SecretObject.promptPrefix, letter: "p")
        state.withLock { $0.prompts[prompt] = PendingPrompt(owner: call.sender, keychains: keychainsToUnlock, objects: pending) }
        return [.paths(unlocked), .objectPath(prompt)]
    }

    private func createCollection(_ call: BusCall, properties: [String: BusValue], alias: String) throws(BusError) -> [BusValue] {
        if let keychain = aliased(alias) {
            return [.objectPath(SecretObject.aliasTarget(alias, keychain: keychain, home: agent.home)), .objectPath("/")]
        }
        guard alias.isEmpty else { throw .notSupported("only the aliases default, login and session exist") }
        guard let label = properties["org.freedesktop.Secret.Collection.Label"]?.stringValue, !label.isEmpty,
              label.utf8.count <= 200, !label.contains("/"), !label.hasPrefix(".") else {
            throw .invalidArguments("a new collection needs a Label: a keychain name without '/' and not starting with '.'")
        }
        let keychain = agent.home.path + "/" + label + ".keychain-db"
        let path = SecretObject.collectionPath(for: keychain)
        if FileManagerLite.exists(keychain) { return [.objectPath(path), .objectPath("/")] }
        _ = try context(call)
        if let error = agent.respond(to: .create(keychain: keychain, password: nil)).error { throw BusError(error) }
        emit(SecretObject.root, SecretServiceNames.serviceInterface, "CollectionCreated", [.objectPath(path)])
        return [.objectPath(path), .objectPath("/")]
    }

    /// Tells clients a collection was locked or unlocked: `PropertiesChanged` of its `Locked`,
    /// `ItemChanged` for each of its items (their label, attributes and dates are readable only
    /// while it is unlocked: libsecret reads them again on this signal, and Seahorse shows them),
    /// and the service's `CollectionChanged`.
    func announceLock(of keychain: String, locked: Bool) {
        let collection = SecretObject.collectionPath(for: keychain)
        emit(collection, "org.freedesktop.DBus.Properties", "PropertiesChanged",
             [.string(SecretServiceNames.collectionInterface), .properties([("Locked", .bool(locked))]), .array(element: "s", [])])
        for item in lockedItemPaths(in: keychain, collection: collection, matching: [:]) {
            emit(collection, SecretServiceNames.collectionInterface, "ItemChanged", [.objectPath(item)])
        }
        emit(SecretObject.root, SecretServiceNames.serviceInterface, "CollectionChanged", [.objectPath(collection)])
    }

    // MARK: - Prompts

    func promptMethod(_ method: Method, path: String) throws(BusError) -> ([BusValue], Bool) {
        // A prompt is its caller's: no other client may answer or dismiss it.
        guard let prompt = state.withLock({ $0.prompts[path] }), prompt.owner == method.call.sender else { throw .noSuchObject(path) }
        let interface = "org.freedesktop.Secret.Prompt"
        if try method.is(interface, "Dismiss", "") {
            guard state.withLock({ $0.prompts.removeValue(forKey: path) }) != nil else { throw .noSuchObject(path) }
            emit(path, interface, "Completed", [.bool(true), .variant(.paths([]))])
            return ([], false)
        }
        if try method.is(interface, "Prompt", "s") {
            guard state.withLock({ $0.prompts.removeValue(forKey: path) }) != nil else { throw .noSuchObject(path) }
            let context = try context(method.call)
            workers.async { [self] in
                var dismissed = false
                for keychain in prompt.keychains where isLocked(keychain) {
                    do {
                        guard let client = context.client, let identity = context.identity else { throw StoreError(.interactionNotAllowed, "no client") }
                        try agent.prompter.unlock(try agent.database(keychain), client: client, identity: identity)
                        agent.onChangeNotify()
                        announceLock(of: keychain, locked: false)
                    } catch {
                        // Said before Completed goes out: a client sees `dismissed`, the log says why.
                        let why = (error as? StoreError)?.message ?? "\(error)"
                        agent.prompter.log("the Secret Service's prompt \(path) (to unlock \(SecretObject.collectionPath(for: keychain))) "
                                           + "completes dismissed: \(why)")
                        dismissed = true
                        break
                    }
                }
                emit(path, interface, "Completed", [.bool(dismissed), .variant(.paths(dismissed ? [] : prompt.objects))])
            }
            return ([], false)
        }
        throw method.unknown
    }
}
