import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeychainStore
import KeyhavenAgentClient
import Synchronization

/// Who a request comes from, and what the access checks found they must ask.
package final class RequestContext: Sendable {
    /// The client process; nil for a request made in the agent's own process (no checks).
    package let client: ClientProcess?
    package let identity: ApplicationIdentity?
    /// The program is the keyhaven command installed beside this agent: it finds items of every
    /// group (security(1)'s role), and is subject to access objects like any program.
    let isAdministrator: Bool
    /// A Secret Service client (D-Bus): that API has no access groups, so it finds the items of
    /// every group but the agent's own; access objects still decide what it may use or change.
    let findsEveryGroup: Bool
    /// Set by a check that needs the user's answer; the request then fails with the check's
    /// error unless the agent can ask.
    let question = Mutex<AccessQuestion?>(nil)

    package static let inProcess = RequestContext(client: nil, identity: nil, isAdministrator: true)

    init(client: ClientProcess?, identity: ApplicationIdentity?, isAdministrator: Bool, findsEveryGroup: Bool = false) {
        self.client = client
        self.identity = identity
        self.isAdministrator = isAdministrator
        self.findsEveryGroup = findsEveryGroup
    }

    /// Refuses (`authFailed`, saying `refusal`) a request that only the administrator programs
    /// (keyhaven, Keychain Access) or the agent's own process may make.
    func requireAdministrator(_ refusal: @autoclosure () -> String) throws(StoreError) {
        guard client == nil || isAdministrator else { throw StoreError(.authFailed, refusal()) }
    }
}

/// The agent's access decisions (docs/access.md): an item's access group decides which programs
/// find it; its access object decides which may use its secret, change it or delete it.
extension AgentService {
    /// The caller a request acts as: of the groups the client asked for, those this program may
    /// use: its own application group, the groups granted to it, those the user allowed for this
    /// request. Any other asks the user, or fails with errSecMissingEntitlement.
    /// ``Caller/applicationGroupMarker`` stands for the program's own group (a client without
    /// crypto cannot name it: git-credential-keyhaven).
    func authorizedCaller(_ claimed: Caller, _ context: RequestContext) throws(StoreError) -> Caller {
        guard let identity = context.identity else { return claimed }
        var claimed = claimed
        // A program whose path is not verified (in a mount namespace of its own) or a sandboxed app
        // names its own group by its path, as it sees it; it is its digest's group or its app's,
        // never that path's.
        let ownByPath = identity.groupAsSeen
        if claimed.accessGroups.contains(where: { $0 == Caller.applicationGroupMarker || $0 == ownByPath }) {
            var named = Caller(accessGroups: claimed.accessGroups.map {
                                   $0 == Caller.applicationGroupMarker || $0 == ownByPath ? identity.applicationGroup : $0
                               },
                               interactionAllowed: claimed.interactionAllowed)
            named.skipsUntrusted = claimed.skipsUntrusted
            named.presenceReuse = claimed.presenceReuse
            claimed = named
        }
        guard !context.isAdministrator, !context.findsEveryGroup else { return claimed }
        var missing: [String] = []
        var granted: Set<String>?
        let allowedOnce = context.client?.allowed.groups ?? []
        for group in claimed.accessGroups where group != identity.applicationGroup && group != Caller.tokenGroup {
            if AccessGrants.reserved.contains(group) {
                throw StoreError(.missingEntitlement, "the access group \(group) is the agent's own")
            }
            if allowedOnce.contains(group) { continue }
            if granted == nil { granted = grants()?.groups(for: identity) ?? [] }
            if granted!.contains(group) || granted!.contains("*") { continue }
            missing.append(group)
        }
        if !missing.isEmpty {
            context.question.withLock { $0 = AccessQuestion(subject: .groups(missing), keychain: home.defaultKeychainPath) }
            throw StoreError(.missingEntitlement, "this program was not granted the access group\(missing.count > 1 ? "s" : "") "
                                                  + missing.joined(separator: ", "))
        }
        return claimed
    }

    /// No client, the keyhaven command included, writes into the agent's own groups (the grants,
    /// the sync engine's keys): a forged grant would give a program groups the user never gave it.
    func refuseReservedGroup(_ attributes: [String: AttributeValue], _ context: RequestContext) throws(StoreError) {
        guard context.client != nil, case .string(let group)? = attributes[.accessGroup], AccessGrants.reserved.contains(group) else { return }
        throw StoreError(.missingEntitlement, "the access group \(group) is the agent's own")
    }

    /// Whether the secret of `item` is the program's to use without asking.
    static func isTrusted(_ item: StoredItem, by identity: ApplicationIdentity, allowed: Set<PersistentReference>) -> Bool {
        guard let access = item.access else { return true }
        return access.trusts(identity) || allowed.contains(item.persistentReference)
    }

    /// Whether reading `item`'s secret needs trust: passwords, private and symmetric keys (a
    /// certificate and a public key are public).
    static func secretNeedsTrust(_ item: StoredItem) -> Bool {
        switch item.itemClass {
        case .genericPassword, .internetPassword: return true
        case .key: return item.attributes[.keyClass] != .number(0)
        default: return false
        }
    }

    /// Found items whose secrets go out: those the program is not trusted with ask the user (or,
    /// with `kSecUseAuthenticationUISkip`, are left out).
    func checkSecrets(_ found: [(keychain: any KeychainBackend, item: StoredItem)], caller: Caller,
                      _ context: RequestContext) throws(StoreError) -> [(keychain: any KeychainBackend, item: StoredItem)] {
        guard let identity = context.identity, let client = context.client else { return found }
        let allowed = client.allowed
        let untrusted = found.filter { Self.secretNeedsTrust($0.item) && !Self.isTrusted($0.item, by: identity, allowed: allowed.items) }
        let absent = found.filter { pair in
            presence.requirement(pair.item) != .none && !allowed.presence.contains(pair.keychain.path)
                && !presence.isFresh(client: client, identity: identity, keychain: pair.keychain.path, reuse: caller.presenceReuse)
        }
        if untrusted.isEmpty && absent.isEmpty { return found }
        if caller.skipsUntrusted {
            let skipped = Set((untrusted + absent).map(\.item.persistentReference))
            let left = found.filter { !skipped.contains($0.item.persistentReference) }
            if left.isEmpty { throw StoreError(.itemNotFound, "no item this program may use without asking matched") }
            return left
        }
        if !untrusted.isEmpty { try ask(about: untrusted.map(\.item), in: untrusted[0].keychain.path, context) }
        // Biometry first, item by item (a finger each, as a Mac asks Touch ID for each item);
        // what biometry alone meets is done, the rest needs the password too.
        var needPassword: [(keychain: any KeychainBackend, item: StoredItem)] = []
        for pair in absent {
            let requirement = presence.requirement(pair.item)
            switch requirement {
            case .none: continue
            case .unavailable:
                throw StoreError(.authFailed, "the item's access control asks for a paired device, and none is paired with this machine")
            case .password:
                needPassword.append(pair)
            case .biometry(let currentSet), .biometryOrPassword(let currentSet), .biometryAndPassword(let currentSet):
                let met = try checkBiometry(pair.item, currentSet: currentSet, caller: caller,
                                            orPassword: requirement == .biometryOrPassword(currentSet: currentSet))
                if met { presence.record(client: client, identity: identity, keychain: pair.keychain.path) }
                if !met || requirement == .biometryAndPassword(currentSet: currentSet) { needPassword.append(pair) }
            }
        }
        if needPassword.isEmpty { return found }
        let keychain = needPassword[0].keychain.path
        context.question.withLock {
            $0 = AccessQuestion(subject: .presence(keychain: keychain, names: needPassword.filter { $0.keychain.path == keychain }.map { Self.name(of: $0.item) }),
                                keychain: keychain)
        }
        throw StoreError(.interactionNotAllowed, "the item asks for the user's presence")
    }

    /// A new `.biometryCurrentSet` item keeps the digest of the fingerprints enrolled now; with
    /// none enrolled it could never open by biometry, and is refused (errSecAuthFailed).
    func captureBiometrySet(_ item: inout NewItem, _ context: RequestContext) throws(StoreError) {
        guard context.client != nil, presence.requirement(flags: item.accessControlFlags).asksForCurrentSet else { return }
        guard let enrolled = fingerprints.enrolledSet() else {
            throw StoreError(.authFailed, "the item's access control is .biometryCurrentSet, and no fingerprint is enrolled on this machine")
        }
        var access = item.access ?? .creatorOnly
        access.biometrySet = enrolled
        item.access = access
    }

    /// Asks fprintd for a finger for `item`: whether it matched. A mismatch, no reader or nothing
    /// enrolled fails the use (errSecAuthFailed, Apple's status) unless the password may stand in
    /// (`orPassword`: false returned, the password is asked). A `.biometryCurrentSet` item opens
    /// by biometry only while the enrolled fingers are those it was added with.
    func checkBiometry(_ item: StoredItem, currentSet: Bool, caller: Caller, orPassword: Bool) throws(StoreError) -> Bool {
        guard caller.interactionAllowed else {
            throw StoreError(.interactionNotAllowed, "the item asks for a fingerprint, and this call allows no interaction")
        }
        func refuse(_ why: String) throws(StoreError) -> Bool {
            if orPassword { return false }
            throw StoreError(.authFailed, why)
        }
        if currentSet {
            guard let enrolled = fingerprints.enrolledSet() else { return try refuse("the item asks for biometry, and no fingerprint is enrolled") }
            guard enrolled == item.access?.biometrySet else {
                return try refuse("the enrolled fingerprints changed since the item was added (.biometryCurrentSet)")
            }
        }
        switch fingerprints.verify() {
        case .match: return true
        case .noMatch: return try refuse("the fingerprint did not match")
        case .unavailable(let why): return try refuse("the item asks for biometry: \(why)")
        }
    }

    /// What a prompt calls an item: its access object's descriptor, label, service or server.
    static func name(of item: StoredItem) -> String {
        if let access = item.access, !access.descriptor.isEmpty { return access.descriptor }
        if case .string(let label)? = item.attributes[.label] { return label }
        if case .string(let service)? = item.attributes[.service] { return service }
        if case .string(let server)? = item.attributes[.server] { return server }
        return "an item"
    }

    /// The check a write runs on the items it would change, inside its transaction.
    func writeAuthorization(for keychain: String, _ context: RequestContext) -> ItemAuthorization? {
        guard let identity = context.identity else { return nil }
        let allowed = context.client?.allowed.items ?? []
        return { (items) throws(StoreError) in
            let untrusted = items.filter { !Self.isTrusted($0, by: identity, allowed: allowed) }
            if !untrusted.isEmpty { try self.ask(about: untrusted, in: keychain, context) }
        }
    }

    /// Records the question and fails; the handler asks the user when it can, and runs the
    /// request again with the answer.
    func ask(about items: [StoredItem], in keychain: String, _ context: RequestContext) throws(StoreError) -> Never {
        let names = items.map(Self.name(of:))
        context.question.withLock {
            $0 = AccessQuestion(subject: .items(keychain: keychain, references: items.map(\.persistentReference), names: names),
                                keychain: keychain)
        }
        throw StoreError(.interactionNotAllowed, "this program is not trusted with the item; the user must allow it")
    }

    /// Always Allow: the program joins each item's access object, or is granted the groups.
    package func remember(_ question: AccessQuestion, for identity: ApplicationIdentity) throws(StoreError) {
        switch question.subject {
        case .groups(let groups):
            guard let grants = grants() else { throw StoreError(.notAvailable, "the default keychain cannot keep the grant") }
            try grants.grant(groups, to: TrustedApplication(identity))
        case .presence:
            break  // never remembered beyond the caller's reuse duration
        case .items(let keychain, let references, _):
            let database = try database(keychain)
            for reference in references {
                let query = ItemQuery.single(reference)
                let unrestricted = Caller(accessGroups: ["*"])
                guard let item = try database.find(query, caller: unrestricted, withSecrets: false).first,
                      let access = item.access else { continue }
                var changes = ItemChanges()
                changes.access = access.trusting(identity)
                _ = try database.update(query, with: changes, caller: unrestricted)
            }
        }
    }

    /// The grants kept in the default keychain; nil when it cannot be opened.
    func grants() -> AccessGrants? {
        (try? registry.database(at: home.defaultKeychainPath, home: home, create: true)).map { AccessGrants(database: $0) }
    }

    /// An access object from a client: its caller marker is the client (for the keyhaven command,
    /// each of its programs: `keyhaven`, `keyhaven-pki` and `keyhaven-sync` are one application),
    /// each path given is hashed.
    func resolved(_ access: ItemAccess?, _ context: RequestContext) throws(StoreError) -> ItemAccess? {
        guard let identity = context.identity else { return access }
        var access = try ApplicationIdentityReader.resolve((access ?? .creatorOnly).resolvingCaller(as: identity))
        if context.isAdministrator, access.applications.contains(TrustedApplication(identity)) {
            for path in administratorPaths.sorted() {
                guard let tool = try? TrustedApplication(ApplicationIdentityReader.application(atPath: path)),
                      !access.applications.contains(tool) else { continue }
                access.applications.append(tool)
            }
        }
        return access
    }
}
