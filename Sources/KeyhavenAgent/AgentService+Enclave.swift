import FoundationEssentials
import KeychainKeys
import KeychainStore
import KeyhavenTPM

/// Secure Enclave keys (docs/tpm.md): P-256 keys made and used inside the TPM the agent holds.
/// The keychain keeps each key's blob as the key item's data; every use loads it for one command
/// and flushes it.
extension AgentService {
    /// A new key in the TPM. No TPM reachable is Apple's answer on a Mac without a Secure
    /// Enclave (errSecUnimplemented).
    func createEnclaveKey() throws(StoreError) -> EnclaveKeyData {
        do throws(TPMError) {
            let (blob, publicKey) = try tpm.use { (connection) throws(TPMError) in try connection.createP256Key() }
            return EnclaveKeyData(publicKey: Data(publicKey), tpmPublic: blob.publicArea, tpmPrivate: blob.privateArea)
        } catch {
            if error.code == .unreachable {
                throw StoreError(.unimplemented, "this machine has no Secure Enclave: \(error.message)")
            }
            throw error.storeError
        }
    }

    /// `request` with the Secure Enclave key `key`.
    func performEnclave(_ request: KeyOperationRequest, key: EnclaveKeyData) throws(StoreError) -> Data {
        let blob = TPMObjectBlob(publicArea: key.tpmPublic, privateArea: key.tpmPrivate)
        guard let publicKey = try? AsymmetricKey(externalRepresentation: Array(key.publicKey), keyType: 73, isPrivate: false),
              publicKey.kind == .ec(.p256) else {
            throw StoreError(.decode, "the Secure Enclave key's public key is damaged")
        }
        let tpm = self.tpm
        // The TPM's own failure, kept to be answered as itself rather than as a key error.
        nonisolated(unsafe) var failure: TPMError?
        func inTPM<T: Sendable>(_ body: (TPMConnection) throws(TPMError) -> T) throws(KeyError) -> T {
            do throws(TPMError) { return try tpm.use(body) } catch {
                failure = error
                throw KeyError(.invalidParameter, error.message)
            }
        }
        let key = HeldElsewhereKey(
            publicKey: publicKey,
            sign: { (digest) throws(KeyError) in
                let (r, s) = try inTPM { (connection) throws(TPMError) in try connection.sign(digest, hash: .sha256, with: blob) }
                return Self.padded(r) + Self.padded(s)
            },
            agree: { (peer) throws(KeyError) in try inTPM { (connection) throws(TPMError) in try connection.sharedSecret(with: blob, peer: peer) } })
        do throws(KeyError) {
            return try key.perform(request)
        } catch {
            if let failure { throw failure.storeError }
            throw StoreError(error.code == .unsupportedAlgorithm ? .unimplemented : .invalidParameter, error.message)
        }
    }

    /// The Secure Enclave key a stored key item holds, if it is one.
    static func enclaveKey(_ item: StoredItem) throws(StoreError) -> EnclaveKeyData? {
        guard item.itemClass == .key, item.attributes["tkid"] == .string(EnclaveKeyData.tokenID) else { return nil }
        guard let secret = item.secret else { throw StoreError(.internalError, "the Secure Enclave key's data was not read") }
        return try EnclaveKeyData(storedBytes: Array(secret))
    }

    /// A signature half as 32 bytes (the TPM may give fewer when it begins with zeros).
    private static func padded(_ half: [UInt8]) -> [UInt8] {
        half.count >= 32 ? Array(half.suffix(32)) : [UInt8](repeating: 0, count: 32 - half.count) + half
    }
}
