import Foundation
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// `kSecClassIdentity`: there is no identity table. An identity is a certificate and a private key
/// whose `klbl` equals the certificate's `pkhh`, in the same keychain, both visible to the caller
/// (Apple's `SecItemDb.c` joins `cert` and `keys` so). An attribute the certificate has filters the
/// certificates (the label is the certificate's, as in Apple's join), one only keys have filters
/// the keys; the access group and synchronizable filters apply to both.
enum IdentityItems {
    struct Found {
        let keychain: any KeychainBackend
        let certificate: StoredItem
        let key: StoredItem
    }

    static let sharedAttributes: Set<String> = [AttributeName.accessGroup.code, AttributeName.synchronizable.code, AttributeName.accessible.code]

    static func find(_ dictionary: ItemDictionary, caller: Caller, limit: Int?) throws(SecStatusError) -> [Found] {
        var certificates = dictionary.query
        certificates.limit = nil
        var keys = ItemQuery(itemClass: .key)
        keys.criteria = dictionary.keyAttributes
        keys.criteria[.keyClass] = .number(1)
        for name in sharedAttributes { if let value = dictionary.attributes[name] { keys.criteria[name] = value } }
        keys.matchAnySynchronizable = certificates.matchAnySynchronizable
        keys.tombstone = certificates.tombstone
        keys.limit = nil
        var found: [Found] = []
        var firstError: StoreError?
        for keychain in try SecItemTargets.forSearch(dictionary) {
            let agentHeld = keychain is AgentKeychain
            do throws(StoreError) {
                let certItems = try findOrNone(certificates, in: keychain, caller: caller, withSecrets: true)
                guard !certItems.isEmpty else { continue }
                let keyItems = try findOrNone(keys, in: keychain, caller: caller, withSecrets: dictionary.returns.data || !agentHeld)
                for certificate in certItems {
                    guard case .data(let hash)? = certificate.attributes[.publicKeyHash] else { continue }
                    for key in keyItems where key.attributes[.applicationLabel] == .data(hash) {
                        found.append(Found(keychain: keychain, certificate: certificate, key: key))
                    }
                }
            } catch {
                firstError = firstError ?? error
            }
            if let limit, found.count >= limit { break }
        }
        if let limit { found = Array(found.prefix(limit)) }
        guard !found.isEmpty else { throw SecStatusError(firstError ?? StoreError(.itemNotFound, "no identity matched")) }
        return found
    }

    private static func findOrNone(_ query: ItemQuery, in keychain: any KeychainBackend, caller: Caller,
                                   withSecrets: Bool) throws(StoreError) -> [StoredItem] {
        do { return try keychain.find(query, caller: caller, withSecrets: withSecrets) } catch where error.code == .itemNotFound { return [] }
    }

    /// The identity a found pair is, for `kSecReturnRef`.
    static func identity(_ found: Found) -> SecIdentity? {
        guard let certificate = CertificateItemAttributes.certificate(from: found.certificate),
              let key = KeyItemAttributes.key(from: found.key, in: found.keychain) else { return nil }
        return SecIdentity(certificate: certificate, privateKey: key)
    }

    /// Adds an identity as Apple's client does: a certificate add and a private-key add, each
    /// with the caller's entries that belong to its class (an attribute of both, such as
    /// `kSecAttrLabel`, reaches both; `kSecUse*` keys reach both). An existing certificate or key
    /// is kept; errSecDuplicateItem only when both were there (Apple's client does the same).
    /// With `kSecReturn*` keys, `result` receives the identity in the shape they ask for.
    static func add(_ identity: SecIdentity, entries: CFDictionary, returns: ReturnFlags, limit: MatchLimit,
                    result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        var certificateItem: [String: Any] = [:], keyItem: [String: Any] = [:]
        for (key, value) in entries {
            guard let name = key as? String else { return errSecParam }
            let halves = halves(of: name)
            if halves.certificate { certificateItem[name] = value }
            if halves.key { keyItem[name] = value }
        }
        certificateItem[QueryKey.valueRef] = identity.certificate
        certificateItem[QueryKey.returnPersistentRef] = true
        var added: CFTypeRef?
        let certificateStatus = SecItemAdd(NSDictionary(dictionary: certificateItem), &added)
        guard certificateStatus == errSecSuccess || certificateStatus == errSecDuplicateItem else { return certificateStatus }
        var keyStatus = errSecDuplicateItem
        if identity.privateKey.localKey != nil {
            keyItem[QueryKey.valueRef] = identity.privateKey
            keyStatus = SecItemAdd(NSDictionary(dictionary: keyItem), nil)
        }
        guard keyStatus == errSecSuccess || keyStatus == errSecDuplicateItem else {
            // A failed add changes nothing: the certificate it added goes again.
            if certificateStatus == errSecSuccess, let reference = added as? Data {
                SecItemDelete(NSDictionary(dictionary: [QueryKey.valuePersistentRef: reference]))
            }
            return keyStatus
        }
        if certificateStatus == errSecDuplicateItem && keyStatus == errSecDuplicateItem { return errSecDuplicateItem }
        guard let result, returns.count > 0 else { return errSecSuccess }
        if returns == ReturnFlags(ref: true) {
            result.pointee = identity
            return errSecSuccess
        }
        // The certificate that was already there: found by Apple's primary key for certificates.
        if added == nil {
            var query: [String: Any] = [QueryKey.itemClass: ItemClass.certificate.rawValue, QueryKey.valueRef: identity.certificate, QueryKey.returnPersistentRef: true]
            for name in [AttributeName.accessGroup.code, AttributeName.synchronizable.code] { query[name] = certificateItem[name] }
            if let keychain = certificateItem[QueryKey.useKeychain] { query[QueryKey.matchSearchList] = [keychain] }
            guard SecItemCopyMatching(NSDictionary(dictionary: query), &added) == errSecSuccess else { return errSecSuccess }
        }
        guard let certificateReference = added as? Data else { return errSecSuccess }
        var query: [String: Any] = [QueryKey.valuePersistentRef: reference(certificate: certificateReference)]
        if returns.data { query[QueryKey.returnData] = true }
        if returns.attributes { query[QueryKey.returnAttributes] = true }
        if returns.ref { query[QueryKey.returnRef] = true }
        if returns.persistentRef { query[QueryKey.returnPersistentRef] = true }
        if limit.isMultiple { query[QueryKey.matchLimit] = QueryKey.matchLimitAll }
        if let keychain = certificateItem[QueryKey.useKeychain] { query[QueryKey.matchSearchList] = [keychain] }
        var found: CFTypeRef?
        if SecItemCopyMatching(NSDictionary(dictionary: query), &found) == errSecSuccess { result.pointee = found }
        return errSecSuccess
    }

    /// Which half of an identity an add's entry goes to: an attribute to the class that has it,
    /// the item-wide keys (accessibility, access control, access, synchronizable, `kSecUse*`) to
    /// both; the class, the value and the return keys to neither.
    private static func halves(of name: String) -> (certificate: Bool, key: Bool) {
        if name == QueryKey.itemClass || name.hasPrefix("v_") || name.hasPrefix("r_") { return (false, false) }
        if name.hasPrefix("u_") || name.hasPrefix("m_") || [AttributeName.accessControl.code, QueryKey.access, AttributeName.synchronizable.code, AttributeName.tombstone.code, AttributeName.multiUser.code, AttributeName.noLegacy.code].contains(name) {
            return (true, true)
        }
        return (ItemClass.certificate.schema[name] != nil, ItemClass.key.schema[name] != nil)
    }

    /// An identity's persistent reference: class `idnt` and its certificate's reference, as Apple's
    /// securityd makes it (`_SecItemMakePersistentRef` with the identity class and the
    /// certificate's row).
    static func reference(certificate: Data) -> Data {
        Data(QueryKey.identityClass.utf8) + certificate.dropFirst(4)
    }

    /// The certificate's reference inside an identity's, or nil if `bytes` is not an identity's.
    static func certificateReference(_ bytes: Data) -> Data? {
        guard bytes.count > 4, bytes.prefix(4).elementsEqual(QueryKey.identityClass.utf8) else { return nil }
        return Data(ItemClass.certificate.rawValue.utf8) + bytes.dropFirst(4)
    }

    /// Deletes identities: each certificate, then its key unless another certificate still uses it.
    static func delete(_ dictionary: ItemDictionary, caller: Caller) throws(SecStatusError) {
        let found = try find(dictionary, caller: caller, limit: nil)
        for identity in found {
            var certificate = ItemQuery(itemClass: .certificate)
            certificate.persistentReference = identity.certificate.persistentReference
            certificate.criteria[.synchronizable] = identity.certificate.attributes[.synchronizable]
            _ = try engine { () throws(StoreError) in
                try identity.keychain.delete(certificate, caller: caller, makeTombstones: dictionary.useTombstones == true)
            }
            guard let label = identity.key.attributes[.applicationLabel] else { continue }
            var others = ItemQuery(itemClass: .certificate)
            others.criteria[.publicKeyHash] = label
            others.matchAnySynchronizable = true
            let stillUsed = (try? identity.keychain.find(others, caller: caller, withSecrets: false))?.isEmpty == false
            if !stillUsed {
                var key = ItemQuery(itemClass: .key)
                key.persistentReference = identity.key.persistentReference
                key.criteria[.synchronizable] = identity.key.attributes[.synchronizable]
                _ = try? identity.keychain.delete(key, caller: caller, makeTombstones: dictionary.useTombstones == true)
            }
        }
    }

    /// Updates identities: the certificate's attributes on each certificate, then the key's on each
    /// key (Apple's client does the same, in that order); an attribute of both goes to both. An
    /// attribute of neither is errSecNoSuchAttr, data errSecParam (which half would it be?).
    static func update(_ dictionary: ItemDictionary, with attributesToUpdate: CFDictionary, caller: Caller) throws(SecStatusError) {
        var certificateEntries: [String: Any] = [:], keyEntries: [String: Any] = [:]
        for (key, value) in attributesToUpdate {
            guard let name = key as? String else { throw .param("a dictionary key is not a string") }
            if name == QueryKey.valueData { throw .param("an identity's data cannot be updated; update its key or certificate") }
            let special = [AttributeName.synchronizable.code, AttributeName.accessControl.code, AttributeName.noLegacy.code, AttributeName.multiUser.code, AttributeName.appClipItem.code, AttributeName.sharingGroup.code].contains(name)
            let inCertificate = special || ItemClass.certificate.schema[name] != nil
            let inKey = special || ItemClass.key.schema[name] != nil
            guard inCertificate || inKey else { throw SecStatusError(errSecNoSuchAttr, "\(name) is not an attribute of an identity") }
            if inCertificate { certificateEntries[name] = value }
            if inKey { keyEntries[name] = value }
        }
        let certificateChanges = try UpdateAttributes.changes(NSDictionary(dictionary: certificateEntries), itemClass: .certificate,
                                                              querySync: dictionary.attributes[.synchronizable])
        let keyChanges = try UpdateAttributes.changes(NSDictionary(dictionary: keyEntries), itemClass: .key,
                                                      querySync: dictionary.attributes[.synchronizable])
        let found = try find(dictionary, caller: caller, limit: nil)
        for identity in found {
            for (item, changes) in [(identity.certificate, certificateChanges), (identity.key, keyChanges)]
            where !changes.attributes.isEmpty || changes.accessControlFlags != nil {
                var query = ItemQuery(itemClass: item.itemClass)
                query.persistentReference = item.persistentReference
                query.criteria[.synchronizable] = item.attributes[.synchronizable]
                _ = try engine { () throws(StoreError) in try identity.keychain.update(query, with: changes, caller: caller) }
            }
        }
    }
}
