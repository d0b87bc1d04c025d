import KeychainModel

extension EnclaveKeyData {
    /// The key's public half, a P-256 point; `.decode` when the stored bytes are not one.
    package func publicP256Key() throws(StoreError) -> AsymmetricKey {
        guard let key = try? AsymmetricKey(externalRepresentation: Array(publicKey), keyType: 73, isPrivate: false), key.kind == .ec(.p256) else {
            throw StoreError(.decode, "the Secure Enclave key's public key is not a P-256 point")
        }
        return key
    }
}
