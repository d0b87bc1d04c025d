import FoundationEssentials
import KeychainModel

/// Performs a ``KeyOperationRequest`` on a stored key item where the keychain is (the agent).
/// The key's material is used here and dropped; only the result leaves.
package enum StoredKeyOperation {
    package static func perform(_ request: KeyOperationRequest, on item: StoredItem) throws(StoreError) -> Data {
        let key = try storedKey(item)
        do throws(KeyError) {
            switch request.operation {
            case .publicKey:
                return key.publicBytes
            case .export:
                guard isExtractable(item) else { throw KeyError(.notExtractable, "the key is not extractable") }
                return key.withExternalRepresentation { Data($0) }
            case .sign:
                return Data(try key.sign(try algorithm(request), Array(request.input)))
            case .decrypt:
                return Data(try key.decrypt(try algorithm(request), Array(request.input)))
            case .keyExchange:
                let peer = try AsymmetricKey(externalRepresentation: Array(request.peerPublicKey), keyType: Int(request.peerKeyType),
                                             isPrivate: false)
                return Data(try key.exchange(try algorithm(request), with: peer, requestedSize: request.requestedSize.map { Int($0) },
                                             sharedInfo: Array(request.sharedInfo)))
            }
        } catch {
            throw StoreError(error.code == .unsupportedAlgorithm ? .unimplemented : .invalidParameter, error.message)
        }
    }

    /// The key a stored key item holds.
    package static func storedKey(_ item: StoredItem) throws(StoreError) -> AsymmetricKey {
        guard item.itemClass == .key, let secret = item.secret,
              case .number(let type)? = item.attributes[.type], case .number(let keyClass)? = item.attributes[.keyClass] else {
            throw StoreError(.invalidParameter, "the item is not a key")
        }
        do {
            return try AsymmetricKey(externalRepresentation: Array(secret), keyType: Int(type), isPrivate: keyClass == 1)
        } catch {
            throw StoreError(.decode, "the stored key's data is not a key")
        }
    }

    /// Whether a key item's material may leave the keychain: public keys always; private keys
    /// unless stored with `kSecAttrIsExtractable` false or held by the Secure Enclave (the TPM).
    package static func isExtractable(_ item: StoredItem) -> Bool {
        if item.itemClass == .key, item.attributes[.tokenID] == .string(EnclaveKeyData.tokenID) { return false }
        guard item.itemClass == .key, case .number(let flag)? = item.attributes[.isExtractable] else { return true }
        return flag != 0 || item.attributes[.keyClass] == .number(0)
    }

    private static func algorithm(_ request: KeyOperationRequest) throws(KeyError) -> KeyAlgorithm {
        guard let parsed = KeyAlgorithm(appleName: request.algorithm) else {
            throw KeyError(.unsupportedAlgorithm, "algorithm \(request.algorithm) is not supported")
        }
        return parsed
    }
}
