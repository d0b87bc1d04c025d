import Crypto
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgentClient
import KeyhavenSSHAgent
import Synchronization

/// The SSH keys kept in one keychain, for an agent that keeps its keys there
/// (`keyhaven-ssh-agent --keychain`): SSH key items (``SSHKeyItem``), found in their access group
/// and used through the same checks as any item's secret.
///
/// A signature reads the key's secret for the client at the other end of the SSH socket (the ssh
/// or git process): its program must be one the item's access object trusts (ssh-add, ssh and
/// ssh-keygen beside the ssh-add that added it; those `keyhaven ssh new-key` found), or the user
/// is asked, as for any item. The key is made for that one signature and dropped.
///
/// A locked keychain is never used silently: the public halves read while it was unlocked stay
/// listed, and a signature asks the user to unlock it (the client's program named), failing if
/// the user declines. Before its first unlock, listing asks.
final class SSHKeychainKeys: Sendable {
    let service: AgentService
    let keychain: String
    /// The public halves read last, listed while the keychain is locked.
    private let lastRead = Mutex<[SSHKeyItem]?>(nil)

    static let caller = Caller(accessGroups: [SSHKeyItem.group])
    /// How many times one signature may ask the user (unlock, then access).
    static let maximumQuestions = 4

    init(service: AgentService, keychain: String) {
        self.service = service
        self.keychain = keychain
    }

    /// The vault as `client` sees it.
    func vault(for client: ClientProcess) -> some SSHKeyVault { Vault(owner: self, client: client) }

    private struct Vault: SSHKeyVault {
        let owner: SSHKeychainKeys
        let client: ClientProcess

        func keys() -> [SSHKeyItem] {
            if let read = try? owner.read() { return read }
            if let cached = owner.lastRead.withLock({ $0 }) { return cached }
            // Never read: the user is asked to unlock, since a program wants the keys now.
            guard (try? unlock()) != nil else { return [] }
            return (try? owner.read()) ?? []
        }

        func sign(_ item: SSHKeyItem, data: [UInt8], flags: UInt32) -> [UInt8]? {
            var questions = 0
            while questions < SSHKeychainKeys.maximumQuestions {
                questions += 1
                let context = owner.service.context(for: client)
                do throws(StoreError) {
                    guard var stored = try owner.secret(of: item, context), var secret = stored.secret.map(Array.init) else { return nil }
                    // The item's copy too: it is this function's alone by now, so it is zeroed in place.
                    let count = stored.secret?.count ?? 0
                    stored.secret?.resetBytes(in: 0..<count)
                    defer { zeroize(&secret) }
                    if item.inTPM { return try owner.tpmSignature(key: secret, reference: stored.persistentReference, data: data) }
                    let signed = try? SSHSigningKey(PrivateKeyFields.decoded(secret).fields).signature(for: data, flags: flags)
                    return signed
                } catch where error.code == .interactionNotAllowed {
                    do {
                        if let question = context.question.withLock({ $0 }) {
                            try owner.service.answer(question, context: context)
                        } else {
                            try unlock()
                        }
                    } catch {
                        owner.service.prompter.log("a signature with the SSH key \(AccessPrompter.shown(item.comment)) was refused: \(error)")
                        return nil
                    }
                } catch {
                    return nil
                }
            }
            return nil
        }

        func keep(_ added: KeyhavenSSHAgent.AgentRequest.AddedKey, confirm: Bool) throws(SSHAgentError) {
            let key = try SSHSigningKey(added.key)
            let item = SSHKeyItem(publicBlob: key.publicBlob, comment: added.comment, confirm: confirm, origin: .added)
            var secret = added.key.encoded(keyType: added.keyType)
            defer { zeroize(&secret) }
            let access = owner.accessForAdded(by: client)
            do throws(StoreError) {
                do {
                    try owner.store(item, secret: secret, access: access)
                } catch where error.code == .interactionNotAllowed {
                    try unlock()  // a locked keychain: the user is asked, for the adding program
                    try owner.store(item, secret: secret, access: access)
                }
            } catch {
                throw SSHAgentError(.refused, "the key could not be kept in the keychain: \(error.message)")
            }
        }

        func remove(blob: [UInt8]?) -> Bool {
            (try? owner.remove(blob: blob)) ?? false
        }

        /// Asks the user to unlock the keychain for the client.
        private func unlock() throws(StoreError) {
            let database = try owner.service.database(owner.keychain)
            try owner.service.prompter.unlock(database, client: client, identity: client.identity())
            owner.service.onChangeNotify()
        }
    }

    /// The kept keys' public halves; throws while the keychain is locked.
    func read() throws(StoreError) -> [SSHKeyItem] {
        let query = SSHKeyItem.query()
        let found: [StoredItem]
        do {
            found = try service.database(keychain).find(query, caller: Self.caller, withSecrets: false)
        } catch where error.code == .itemNotFound {
            found = []
        }
        let items = found.compactMap { SSHKeyItem(attributes: $0.attributes) }
        lastRead.withLock { $0 = items }
        return items
    }

    /// The private key of `item`, once the client's program may use it (``AgentService/checkSecrets``:
    /// its access object, the user's presence where the item asks for it); nil when the key is
    /// no longer there. A check that needs the user sets the context's question and throws.
    func secret(of item: SSHKeyItem, _ context: RequestContext) throws(StoreError) -> StoredItem? {
        var query = SSHKeyItem.query(account: item.account)
        query.limit = 1
        let database = try service.database(keychain)
        var caller = Self.caller
        caller.interactionAllowed = true
        let found: [StoredItem]
        do {
            found = try database.find(query, caller: caller, withSecrets: true)
        } catch where error.code == .itemNotFound {
            return nil
        }
        guard var stored = found.first, SSHKeyItem(attributes: stored.attributes)?.publicBlob == item.publicBlob else { return nil }
        // An SSH key item without an access object, however it was written, is judged by the one a
        // synced copy gets on arrival: OpenSSH's programs, never every program.
        if stored.access == nil { stored.access = ApplicationIdentityReader.replicaAccess(for: stored.attributes) }
        return try service.checkSecrets([(database, stored)], caller: caller, context).first?.item
    }

    /// An ECDSA P-256 signature by the TPM key `key` (its stored bytes), as SSH writes it: the
    /// TPM signs SHA-256 of `data` (X9.62), and r and s become SSH's mpints.
    func tpmSignature(key: [UInt8], reference: PersistentReference, data: [UInt8]) throws(StoreError) -> [UInt8]? {
        let enclaveKey = try EnclaveKeyData(storedBytes: key)
        var request = KeyOperationRequest(.sign, reference: reference)
        request.algorithm = "algid:sign:ECDSA:message-X962:SHA256"
        request.input = Data(data)
        let der = try service.performEnclave(request, key: enclaveKey)
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: der) else { return nil }
        return SSHSigningKey.ecdsaSignature("nistp256", signature.rawRepresentation)
    }

    /// Adds (or replaces) a key item.
    func store(_ item: SSHKeyItem, secret: [UInt8], access: ItemAccess) throws(StoreError) {
        let database = try service.database(keychain)
        let query = SSHKeyItem.query(account: item.account)
        var data = Data(secret)
        defer { data.resetBytes(in: 0..<data.count) }
        do {
            _ = try database.delete(query, caller: Self.caller, makeTombstones: true)
        } catch where error.code == .itemNotFound {}
        _ = try database.add(NewItem(itemClass: .genericPassword, attributes: item.attributes, secret: data, access: access),
                             caller: Self.caller)
        service.onChangeNotify()
        _ = try? read()
    }

    /// Removes the added key with `blob`, or every added key (nil).
    func remove(blob: [UInt8]?) throws(StoreError) -> Bool {
        let removable = try read().filter { $0.origin == .added && (blob == nil || $0.publicBlob == blob) }
        let database = try service.database(keychain)
        for item in removable {
            let query = SSHKeyItem.query(account: item.account)
            _ = try? database.delete(query, caller: Self.caller, makeTombstones: true)
        }
        if !removable.isEmpty { service.onChangeNotify() }
        _ = try? read()
        return !removable.isEmpty
    }

    /// The access object of a key a client adds: the adding program and OpenSSH's ssh and
    /// ssh-keygen installed beside it (each pinned by its digest, or its path where the user
    /// cannot change it), so that ssh, git (through ssh and ssh-keygen) and ssh-add use the key
    /// without asking, and any other program of the user is asked about.
    func accessForAdded(by client: ClientProcess) -> ItemAccess {
        let adder = client.identity()
        var applications = [TrustedApplication(adder)]
        let folder = adder.path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        for name in ["ssh", "ssh-keygen"] where !folder.isEmpty {
            if let program = try? ApplicationIdentityReader.application(atPath: folder + "/" + name) {
                applications.append(TrustedApplication(program))
            }
        }
        return ItemAccess(applications: applications, descriptor: "")
    }
}
