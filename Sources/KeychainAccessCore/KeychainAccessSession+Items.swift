import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenAgentClient

/// What Keychain Access does to one item. Attributes and certificates are read like any
/// client's; a secret, an edit or a deletion goes with the keychain's password
/// (``ItemAdministration``), and an access object changes with it too (`keyhaven access`'s request).
extension KeychainAccessSession {
    /// The item `row` names, whole but for its secret (its access object included).
    package func item(_ row: ItemRow) throws(StoreError) -> StoredItem {
        var query = ItemQuery.single(row.persistentReference)
        query.limit = 1
        guard let item = try session.send(.find(keychains: [row.keychainPath], query: query, caller: session.caller, withSecrets: false)).items().first else {
            throw StoreError(.itemNotFound, "The item is no longer in the keychain.")
        }
        return item
    }

    /// The item's secret, with the keychain's password (nil or empty for a keychain without one).
    package func reveal(_ row: ItemRow, password: [UInt8]?) throws(StoreError) -> [UInt8] {
        guard let secret = try administer(row, password: password, .reveal).item().secret else { throw StoreError(.itemNotFound, "This item's data never leaves the agent.") }
        return Array(secret)
    }

    /// Changes the item's label, account and comment (a certificate or key has no account).
    package func update(_ row: ItemRow, label: String, account: String, comment: String, password: [UInt8]?) throws(StoreError) {
        var attributes: [String: AttributeValue] = .named([.label: .string(label), .comment: .string(comment)])
        if row.itemClass.isPassword { attributes[.account] = .string(account) }
        try administer(row, password: password, .update(attributes: attributes))
    }

    package func delete(_ row: ItemRow, password: [UInt8]?) throws(StoreError) {
        try administer(row, password: password, .delete)
    }

    /// Changes who may use the item: every program, or the trusted programs listed (by path).
    package func setAccess(_ row: ItemRow, _ change: AccessChange, password: [UInt8]?) throws(StoreError) {
        try session.send(.setAccess(keychains: [row.keychainPath], query: .single(row.persistentReference), change: change, password: Self.data(password)))
    }

    /// Adds a password item to `keychain`: an internet password when `name` is a URL
    /// (`scheme://server[:port][/path]`), else an application password whose service is `name`.
    /// The programs it trusts are Keychain Access and the other keyhaven programs, as for an
    /// item `keyhaven` adds.
    package func addPassword(to keychain: String, name: String, account: String, password: [UInt8]) throws(StoreError) -> ItemRow {
        let name = name.trimmed
        guard !name.isEmpty else { throw StoreError(.invalidParameter, "Give the item a name or a URL.") }
        let (itemClass, attributes) = try Self.passwordAttributes(name: name, account: account)
        let item = NewItem(itemClass: itemClass, attributes: attributes, secret: Data(password), access: .creatorOnly)
        let added = try session.send(.add(keychain: keychain, item: item, caller: session.caller)).item()
        return ItemRow(added, keychainPath: keychain)
    }

    /// The attributes of a new password item named `name` (a URL or a service).
    package static func passwordAttributes(name: String, account: String) throws(StoreError) -> (ItemClass, [String: AttributeValue]) {
        var attributes: [String: AttributeValue] = .named([.label: .string(name), .account: .string(account)])
        guard name.contains("://") else {
            attributes[.service] = .string(name)
            return (.genericPassword, attributes)
        }
        guard let url = URL(string: name), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw StoreError(.invalidParameter, "\"\(name)\" is not a URL Keychain Access can read (scheme://server/path).")
        }
        attributes[.server] = .string(host)
        attributes[.protocol] = .string(ItemRow.schemes.first { $0.value == scheme }?.key ?? String((scheme + "    ").prefix(4)))
        if let port = url.port { attributes[.port] = .number(Int64(port)) }
        if !url.path.isEmpty && url.path != "/" { attributes[.path] = .string(url.path) }
        return (.internetPassword, attributes)
    }

    /// The certificate `row` names, parsed.
    package func certificate(_ row: ItemRow) throws(StoreError) -> CertificateInfo {
        var query = ItemQuery.single(row.persistentReference)
        query.limit = 1
        guard let der = try session.send(.find(keychains: [row.keychainPath], query: query, caller: session.caller, withSecrets: true)).items().first?.secret,
              let info = CertificateInfo(der: Array(der)) else {
            throw StoreError(.decode, "The item is not a certificate Keychain Access can read.")
        }
        return info
    }

    /// The certificate as PEM.
    package func exportPEM(_ row: ItemRow) throws(StoreError) -> [UInt8] {
        try Self.encode([.certificate(try certificate(row))], format: .pemSequence, passphrase: nil)
    }

    /// The identity (`row`, a certificate with its private key) as PKCS#12 protected by
    /// `passphrase`; the private key is read with the keychain's password.
    package func exportPKCS12(_ row: ItemRow, keychainPassword: [UInt8]?, passphrase: [UInt8]) throws(StoreError) -> [UInt8] {
        guard !passphrase.isEmpty else { throw StoreError(.passphraseRequired, "Give the file a passphrase: an empty one protects nothing.") }
        let certificate = try certificate(row)
        var keys = ItemQuery(itemClass: .key)
        keys.criteria[.keyClass] = .number(1)
        keys.criteria[.applicationLabel] = .data(certificate.publicKeyHash)
        keys.matchAnySynchronizable = true
        keys.limit = 1
        guard let key = try session.send(.find(keychains: [row.keychainPath], query: keys, caller: session.caller, withSecrets: false)).items().first else {
            throw StoreError(.itemNotFound, "This certificate's private key is not in its keychain.")
        }
        let stored = try administer(ItemRow(key, keychainPath: row.keychainPath), password: keychainPassword, .reveal).item()
        guard stored.secret != nil else {
            throw StoreError(.notAvailable, "This identity's private key cannot leave the keychain (it is not extractable).")
        }
        let privateKey = try StoredKeyOperation.storedKey(stored)
        return try Self.encode([.identity(PKCS12Identity(privateKey: privateKey, certificate: certificate))], format: .pkcs12, passphrase: passphrase)
    }

    @discardableResult
    private func administer(_ row: ItemRow, password: [UInt8]?, _ action: ItemAdministration) throws(StoreError) -> AgentAnswer {
        try session.send(.administer(keychain: row.keychainPath, reference: row.persistentReference, password: Self.data(password),
                                     action: action))
    }

    private static func data(_ password: [UInt8]?) -> Data? { password.flatMap { $0.isEmpty ? nil : Data($0) } }

    private static func encode(_ items: [ExternalItem], format: ExternalFormat, passphrase: [UInt8]?) throws(StoreError) -> [UInt8] {
        do throws(ImportExportError) {
            return try ExternalItemEncoder.encode(items, format: format, pemArmour: format == .pemSequence, passphrase: passphrase)
        } catch {
            throw error.storeError
        }
    }
}
