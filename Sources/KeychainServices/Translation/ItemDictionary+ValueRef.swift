import Foundation
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// `kSecValueRef`: the object an item is made from (Add) or that names an item (a query).
extension ItemDictionary {
    /// Whether results need the items' secrets: data asked for, or a key's or certificate's ref
    /// (made from its data).
    var needsSecrets: Bool { returns.data || (returns.ref && (itemClass == .key || itemClass == .certificate)) }

    /// A certificate added as `kSecValueData`: its attributes are read from it as from a ref; data
    /// that is not a DER certificate is errSecParam.
    mutating func completeCertificateFromData() throws(SecStatusError) {
        guard let data = valueData, let info = CertificateInfo(der: Array(data)) else {
            throw .param("a certificate item's kSecValueData must be a DER certificate")
        }
        for (name, attribute) in CertificateItemAttributes.of(info) where attributes[name] == nil {
            attributes[name] = attribute
        }
    }

    mutating func readValueRef(_ value: Any, _ operation: SecItemOperation) throws(SecStatusError) {
        if let identity = value as? SecIdentity, isIdentity {
            valueRef = identity
            attributes[.issuer] = .data(Data(identity.certificate.info.normalizedIssuerContent))
            attributes[.serialNumber] = .data(Data(identity.certificate.info.serialNumber))
            return
        }
        if let certificate = value as? SecCertificate, itemClass == .certificate, !isIdentity {
            valueRef = certificate
            if operation == .add {
                for (name, attribute) in CertificateItemAttributes.of(certificate.info) where attributes[name] == nil {
                    attributes[name] = attribute
                }
                valueData = Data(certificate.info.der)
            } else {
                // Apple's primary key for certificates: issuer and serial number.
                attributes[.issuer] = .data(Data(certificate.info.normalizedIssuerContent))
                attributes[.serialNumber] = .data(Data(certificate.info.serialNumber))
            }
            return
        }
        guard let key = value as? SecKey, itemClass == .key else {
            throw .param("kSecValueRef holds no object of a class this keychain stores")
        }
        valueRef = key
        if operation == .add {
            // The key's own attributes, under any the caller gave (Apple merges the ref's
            // attribute dictionary the same way); its data is its external representation.
            for (name, attribute) in KeyItemAttributes.of(key) where attributes[name] == nil {
                attributes[name] = attribute
            }
            switch key.backing {
            case .local(let local):
                valueData = local.withExternalRepresentation { Data($0) }
            case .enclave(_, let enclaveKey, _):
                // Apple's Secure Enclave key item: the token's blob as its data, `tkid` set.
                valueData = Data(enclaveKey.wireBytes)
                attributes[.tokenID] = .string(EnclaveKeyData.tokenID)
            case .agent:
                throw .param("a key the agent holds cannot be added again; add the key it was made from")
            }
        } else {
            attributes[.applicationLabel] = .data(key.applicationLabel)
            attributes[.keyClass] = .number(key.isPrivate ? 1 : 0)
        }
    }
}

/// What a key stores as attributes: Apple's `SecKeyCopyAttributes` set, as stored numbers.
enum KeyItemAttributes {
    static func of(_ key: SecKey) -> [String: AttributeValue] {
        ItemAttributes.key(key.publicKey, isPrivate: key.isPrivate, isExtractable: key.isExtractable)
    }

    /// The `SecKey` a stored key item is (nil for an item that is not a usable key). From the
    /// agent, a private key stays there: the `SecKey` has its public key and a reference.
    static func key(from item: StoredItem, in keychain: any KeychainBackend) -> SecKey? {
        guard item.itemClass == .key, case .number(let type)? = item.attributes[.type],
              case .number(let keyClass)? = item.attributes[.keyClass] else { return nil }
        let extractable = isExtractable(item)
        if let agent = keychain as? AgentKeychain {
            let request = KeyOperationRequest(.publicKey, reference: item.persistentReference)
            guard let bytes = try? agent.keyOperation(request, caller: AccessGroupConfiguration.currentCaller()),
                  let publicKey = try? AsymmetricKey(externalRepresentation: Array(bytes), keyType: Int(type), isPrivate: false)
            else { return nil }
            if keyClass == 0 { return SecKey(publicKey, storedAttributes: item.attributes) }
            return SecKey(agentKey: publicKey, reference: item.persistentReference, keychain: agent, isExtractable: extractable,
                          storedAttributes: item.attributes)
        }
        if item.attributes[.tokenID] == .string(EnclaveKeyData.tokenID) { return EnclaveKeys.key(from: item) }
        guard let key = try? StoredKeyOperation.storedKey(item) else { return nil }
        return SecKey(key, isExtractable: extractable, storedAttributes: item.attributes)
    }

    /// Whether a key item's material may be returned (`kSecAttrIsExtractable`, true when unset).
    static func isExtractable(_ item: StoredItem) -> Bool { StoredKeyOperation.isExtractable(item) }
}
