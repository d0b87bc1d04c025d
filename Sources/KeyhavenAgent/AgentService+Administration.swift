import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeychainStore
import KeyhavenAgentClient

/// `keyhaven access grant|revoke|list`: changes to access objects and group grants, authorized by
/// the keychain's password (when it has one), whoever sends them.
extension AgentService {
    /// Changes the access objects of the items matching `query`; the count changed.
    func setAccess(in keychains: [any KeychainBackend], query: ItemQuery, change: AccessChange,
                   password: Data?) throws(StoreError) -> Int {
        let trusted = try change.trust.map { (path) throws(StoreError) in TrustedApplication(try ApplicationIdentityReader.application(atPath: path)) }
        let untrusted = try change.untrust.map { (path) throws(StoreError) -> (String, Data?) in
            (path, try? ApplicationIdentityReader.application(atPath: path).digest)
        }
        let unrestricted = Caller(accessGroups: ["*"])
        var query = query
        query.limit = nil
        return try KeychainSearch.write(in: keychains) { (keychain) throws(StoreError) -> Int in
            guard let database = keychain as? KeychainDatabase else { throw StoreError(.internalError, "not a keychain of the agent's") }
            let items: [StoredItem]
            do throws(StoreError) {
                items = try database.find(query, caller: unrestricted, withSecrets: false)
            } catch where error.code == .itemNotFound {
                return 0
            }
            try Self.checkPassword(password, of: database)
            var count = 0
            for item in items {
                var access = item.access ?? ItemAccess(anyApplication: true)
                if let any = change.anyApplication { access.anyApplication = any }
                access.applications += trusted.filter { !access.applications.contains($0) }
                access.applications.removeAll { entry in
                    untrusted.contains { path, digest in entry.path == path || (digest != nil && entry.digest == digest) }
                }
                guard access != item.access else { continue }
                var changes = ItemChanges()
                changes.access = access
                count += try database.update(.single(item.persistentReference), with: changes, caller: unrestricted)
            }
            return count
        }
    }

    /// Lists the grants, after changing them when asked.
    func changeGrants(_ change: GrantChange?, password: Data?) throws(StoreError) -> [ApplicationGrant] {
        guard let grants = grants() else { throw StoreError(.notAvailable, "the default keychain cannot be opened") }
        if let change {
            try Self.checkPassword(password, of: grants.database)
            if let reserved = change.groups.first(where: AccessGrants.reserved.contains) {
                throw StoreError(.invalidParameter, "the access group \(reserved) is the agent's own and cannot be granted")
            }
            guard !change.groups.isEmpty, !change.groups.contains("") else {
                throw StoreError(.invalidParameter, "name at least one access group")
            }
            let application = TrustedApplication(try ApplicationIdentityReader.application(atPath: change.application))
            if change.revoke { try grants.revoke(change.groups, from: application) } else { try grants.grant(change.groups, to: application) }
        }
        return grants.all()
    }

    /// Keychain Access's use of one item: the keychain's password stands in for the item's access
    /// object, as on the Mac, where Keychain Access asks for it to show a password. Only the
    /// administrator programs ask (``RequestSenders``); the agent's own items are not theirs to touch.
    func administer(_ reference: PersistentReference, in database: KeychainDatabase, password: Data?,
                    action: ItemAdministration) throws(StoreError) -> AgentAnswer {
        let query = ItemQuery.single(reference)
        let unrestricted = Caller(accessGroups: ["*"])
        guard let item = try database.find(query, caller: unrestricted, withSecrets: false).first else {
            throw StoreError(.itemNotFound, "no item with that reference")
        }
        if case .string(let group)? = item.attributes[.accessGroup], AgentGroups.all.contains(group) {
            throw StoreError(.missingEntitlement, "the access group \(group) is the agent's own")
        }
        try Self.checkPassword(password, of: database, toDo: "use an item without its access object")
        switch action {
        case .reveal:
            guard var revealed = try database.find(query, caller: unrestricted, withSecrets: true).first else {
                throw StoreError(.itemNotFound, "no item with that reference")
            }
            if !StoredKeyOperation.isExtractable(revealed) { revealed.secret = nil }
            return .item(revealed)
        case .update(let attributes):
            let editable: Set<String> = [AttributeName.label.code, AttributeName.account.code, AttributeName.comment.code]
            if let other = attributes.keys.sorted().first(where: { !editable.contains($0) }) {
                throw StoreError(.invalidParameter, "Keychain Access changes an item's label, account and comment, not \(other)")
            }
            var changes = ItemChanges()
            changes.attributes = attributes
            _ = try database.update(query, with: changes, caller: unrestricted)
            guard let updated = try database.find(query, caller: unrestricted, withSecrets: false).first else {
                throw StoreError(.itemNotFound, "no item with that reference")
            }
            return .item(updated)
        case .delete:
            _ = try database.delete(query, caller: unrestricted, makeTombstones: false)
            return .done
        }
    }

    /// A keychain with a password takes changes to who may use it only with that password.
    static func checkPassword(_ password: Data?, of database: KeychainDatabase,
                              toDo purpose: String = "change who may use its items") throws(StoreError) {
        guard database.status().hasPassword else { return }
        guard var bytes = password.map(Array.init) else {
            throw StoreError(.authFailed, "the keychain's password is needed to \(purpose)")
        }
        defer { zeroize(&bytes) }
        try database.verifyPassword(bytes)
    }
}
