import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// Items: generic passwords seen through their lookup attributes (``SecretServiceAttributes``).
extension SecretService {
    /// The lookup attributes a client sees: those it gave, with `service` and the account keys
    /// reading the item's current `svce` and `acct`; for an item made by the keychain API, its
    /// service and account.
    static func lookupAttributes(_ item: StoredItem) -> [String: String] {
        let service = item.attributes[.service]?.utf8String ?? ""
        let account = item.attributes[.account]?.utf8String ?? ""
        guard let stored = SecretServiceAttributes(item: item.attributes) else {
            var attributes: [String: String] = [:]
            if !service.isEmpty { attributes[SecretServiceAttributes.serviceKey] = service }
            if !account.isEmpty { attributes["account"] = account }
            return attributes
        }
        var attributes = stored.attributes
        if attributes[SecretServiceAttributes.serviceKey] != nil { attributes[SecretServiceAttributes.serviceKey] = service }
        for key in SecretServiceAttributes.accountKeys where attributes[key] != nil { attributes[key] = account }
        return attributes
    }

    static func contentType(_ item: StoredItem) -> String {
        SecretServiceAttributes(item: item.attributes)?.contentType ?? "text/plain"
    }

    /// The query that finds items carrying `attributes`: the service and account through their
    /// columns, the rest through the lookup-attribute hashes. Results still need ``carries``.
    static func query(for attributes: [String: String]) -> ItemQuery {
        var query = ItemQuery(itemClass: .genericPassword)
        query.limit = nil
        query.matchAnySynchronizable = true
        var rest = attributes
        if let service = attributes[SecretServiceAttributes.serviceKey] {
            query.criteria[.service] = .string(service)
            rest[SecretServiceAttributes.serviceKey] = nil
        }
        if let key = SecretServiceAttributes.accountKeys.first(where: { attributes[$0] != nil }) {
            query.criteria[.account] = .string(attributes[key]!)
        }
        for key in SecretServiceAttributes.accountKeys { rest[key] = nil }
        query.secretAttributes = rest
        return query
    }

    static func carries(_ item: StoredItem, _ wanted: [String: String]) -> Bool {
        let attributes = lookupAttributes(item)
        return wanted.allSatisfy { attributes[$0.key] == $0.value }
    }

    /// Items of `keychain` matching `attributes`, without the agent's own (its reserved groups).
    func items(in keychain: String, matching attributes: [String: String], withSecrets: Bool = false,
               _ context: RequestContext) throws(BusError) -> [StoredItem] {
        let request = AgentRequest.find(keychains: [keychain], query: Self.query(for: attributes), caller: Self.caller,
                                        withSecrets: withSecrets)
        let found: [StoredItem]
        do throws(BusError) {
            found = try find(request, context)
        } catch where error.name == "org.freedesktop.Secret.Error.NoSuchObject" {
            return []
        }
        return found.filter { Self.isVisible($0) && Self.carries($0, attributes) }
    }

    static func isVisible(_ item: StoredItem) -> Bool {
        guard case .string(let group)? = item.attributes[.accessGroup] else { return true }
        return !AccessGrants.reserved.contains(group)
    }

    /// One item by its persistent identity, with its secret when asked.
    func item(_ reference: PersistentReference, in keychain: String, withSecret: Bool, _ context: RequestContext,
              path: String) throws(BusError) -> StoredItem {
        var query = ItemQuery(itemClass: .genericPassword)
        query.persistentReference = reference
        query.matchAnySynchronizable = true
        let request = AgentRequest.find(keychains: [keychain], query: query, caller: Self.caller, withSecrets: withSecret)
        do throws(BusError) {
            guard let item = try find(request, context).first, Self.isVisible(item) else { throw .noSuchObject(path) }
            return item
        } catch where error.name == "org.freedesktop.Secret.Error.NoSuchObject" {
            throw .noSuchObject(path)
        }
    }

    /// Changes one item by its persistent identity.
    func change(_ reference: PersistentReference, in keychain: String, _ changes: ItemChanges, _ context: RequestContext,
                path: String) throws(BusError) {
        var query = ItemQuery(itemClass: .genericPassword)
        query.persistentReference = reference
        query.matchAnySynchronizable = true
        _ = try item(reference, in: keychain, withSecret: false, context, path: path)
        try perform(.update(keychains: [keychain], query: query, changes: changes, caller: Self.caller), context)
    }

    /// Whether a keychain is locked (has a password and is not unlocked).
    func isLocked(_ keychain: String) -> Bool {
        guard case .answer(.status(let status)) = agent.respond(to: .status(keychain: keychain)) else { return true }
        return status.hasPassword && !status.isUnlocked
    }

    /// The item paths of a locked keychain's items matching `attributes` (by their search
    /// hashes alone: nothing is decrypted), or only the item `reference` names.
    func lockedItemPaths(in keychain: String, collection: String, matching attributes: [String: String],
                         reference: PersistentReference? = nil) -> [String] {
        var query = Self.query(for: attributes)
        query.persistentReference = reference
        guard let database = try? agent.database(keychain),
              let references = try? database.lockedMatches(query, groups: nil, excluding: Array(AccessGrants.reserved)) else { return [] }
        return references.compactMap { SecretObject.itemPath(collection: collection, reference: $0) }
    }

    /// Every keychain of the home, the default one first, then the in-memory `session` one.
    func keychains() -> [String] {
        let home = agent.home
        return [home.defaultKeychainPath] + FileManagerLite.keychains(in: home.path).filter { $0 != home.defaultKeychainPath }
            + [home.sessionKeychainPath]
    }
}
