import FoundationEssentials
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient
import KeyhavenTPM

/// Secure Enclave keys (docs/tpm.md): P-256 keys made and used inside the TPM the agent holds.
/// The keychain keeps each key's blob and authorization as the key item's data; every use loads
/// the blob for one command, proves the authorization and flushes it.
extension AgentService {
    /// The TPM the agent reaches and its dictionary-attack state.
    func tpmStatus() throws(StoreError) -> AgentAnswer {
        do throws(TPMError) {
            return .tpmStatus(try tpm.use { (connection) throws(TPMError) in try connection.status() })
        } catch {
            throw error.storeError
        }
    }

    /// A new key in the TPM, with a random authorization that the making process holds (a key kept
    /// by no keychain works for that process alone). No TPM reachable is Apple's answer on a Mac
    /// without a Secure Enclave (errSecUnimplemented).
    func createEnclaveKey() throws(StoreError) -> EnclaveKeyData {
        var authorization = Array(KeychainCrypto.randomBytes(32))
        defer { zeroize(&authorization) }
        do throws(TPMError) {
            let made = authorization
            let (blob, publicKey) = try tpm.use { (connection) throws(TPMError) in try connection.createP256Key(authorization: made) }
            return EnclaveKeyData(publicKey: Data(publicKey), object: blob, authorization: authorization)
        } catch {
            if error.code == .unreachable {
                throw StoreError(.unimplemented, "this machine has no Secure Enclave: \(error.message)")
            }
            throw error.storeError
        }
    }

    /// `request` with the Secure Enclave key `key`.
    func performEnclave(_ request: KeyOperationRequest, key: EnclaveKeyData) throws(StoreError) -> Data {
        let (blob, authorization) = (key.object, key.authorization)
        let publicKey = try key.publicP256Key()
        let tpm = self.tpm
        // The TPM's own failure, kept to be answered as itself rather than as a key error.
        var failure: TPMError?
        func inTPM<T: Sendable>(_ body: (TPMConnection) throws(TPMError) -> T) throws(KeyError) -> T {
            do throws(TPMError) { return try tpm.use(body) } catch {
                failure = error
                throw KeyError(.invalidParameter, error.message)
            }
        }
        let key = HeldElsewhereKey(
            publicKey: publicKey,
            sign: { (digest) throws(KeyError) in
                try inTPM { (connection) throws(TPMError) in try connection.sign(digest, with: blob, authorization: authorization) }
            },
            agree: { (peer) throws(KeyError) in
                try inTPM { (connection) throws(TPMError) in try connection.sharedSecret(with: blob, peer: peer, authorization: authorization) }
            })
        do throws(KeyError) {
            return try key.perform(request)
        } catch {
            if let failure { throw Self.enclaveError(failure) }
            throw StoreError(error.code == .unsupportedAlgorithm ? .unimplemented : .invalidParameter, error.message)
        }
    }

    /// A TPM failure with a Secure Enclave key: a wrong authorization says whose key it is (the
    /// object is not under the TPM's dictionary-attack count: its authorization is 32 random bytes).
    static func enclaveError(_ error: TPMError) -> StoreError {
        guard error.code == .authFailed else { return error.storeError }
        return StoreError(.authFailed, "the Secure Enclave key's authorization is not the one given: the key belongs to a keychain item "
                          + "or to the process that made it (\(error.message))")
    }

    /// The Secure Enclave key a stored key item holds, if it is one.
    static func enclaveKey(_ item: StoredItem) throws(StoreError) -> EnclaveKeyData? {
        guard item.itemClass == .key, item.attributes[.tokenID] == .string(EnclaveKeyData.tokenID) else { return nil }
        guard let secret = item.secret else { throw StoreError(.internalError, "the Secure Enclave key's data was not read") }
        return try EnclaveKeyData(storedBytes: Array(secret))
    }
}
