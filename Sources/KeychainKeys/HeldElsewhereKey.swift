import Crypto
import FoundationEssentials
import KeychainModel

/// A P-256 private key whose private half is held elsewhere (inside the TPM): Apple's algorithms
/// over the two things that hold it can do, an ECDSA signature of a 32-byte digest and an ECDH
/// agreement. Hashing, the signature's encoding, the KDFs and ECIES run here, as on a Mac where the
/// Secure Enclave does only the private-key step.
package struct HeldElsewhereKey {
    /// The key's public half.
    package let publicKey: AsymmetricKey
    /// `r || s` of an ECDSA signature of a 32-byte digest.
    package let sign: ([UInt8]) throws(KeyError) -> [UInt8]
    /// The ECDH shared secret with a P-256 public point (X9.63).
    package let agree: ([UInt8]) throws(KeyError) -> [UInt8]

    package init(publicKey: AsymmetricKey, sign: @escaping ([UInt8]) throws(KeyError) -> [UInt8],
                 agree: @escaping ([UInt8]) throws(KeyError) -> [UInt8]) {
        self.publicKey = publicKey
        self.sign = sign
        self.agree = agree
    }

    /// Performs `request`. The private key's export is refused: it never leaves where it is held.
    package func perform(_ request: KeyOperationRequest) throws(KeyError) -> Data {
        let algorithm = KeyAlgorithm(appleName: request.algorithm)
        switch (request.operation, algorithm) {
        case (.publicKey, _):
            return publicKey.publicBytes
        case (.export, _):
            throw KeyError(.notExtractable, "a Secure Enclave key's private key never leaves the TPM")
        case (.sign, .ecdsa(let how, let raw)?):
            let digest = try AsymmetricKey.digestBytes(how, Array(request.input))
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: try sign(Self.fitted(digest))) else {
                throw .param("the signature from where the key is held is malformed")
            }
            return raw ? signature.rawRepresentation : signature.derRepresentation
        case (.keyExchange, .ecdh(let kdf)?):
            let peer = try AsymmetricKey(externalRepresentation: Array(request.peerPublicKey), keyType: Int(request.peerKeyType), isPrivate: false)
            guard peer.kind == publicKey.kind else { throw .param("the other key is not a public key on the same curve") }
            var shared = try agree(Array(peer.publicBytes))
            defer { zeroize(&shared) }
            return Data(try AsymmetricKey.derive(.bytes(shared), kdf: kdf, requestedSize: request.requestedSize.map { Int($0) },
                                                 sharedInfo: Array(request.sharedInfo)))
        case (.decrypt, .ecies(let hash, let variableIV)?):
            let plaintext = try ECIES(hash: hash, variableIV: variableIV).decrypt(Array(request.input), curve: publicKey.kind) {
                (ephemeral) throws(KeyError) in .bytes(try agree(Array(AsymmetricKey.ecPublic(ephemeral).publicBytes)))
            }
            return Data(plaintext)
        default:
            throw KeyError(.unsupportedAlgorithm, "algorithm \(request.algorithm) is not supported by a Secure Enclave key")
        }
    }

    /// The digest as ECDSA on P-256 reads it: the leftmost 256 bits of a longer one, and a shorter
    /// one as the same number in 32 bytes, so a TPM that signs only 32-byte digests signs any.
    static func fitted(_ digest: [UInt8]) -> [UInt8] {
        digest.count >= 32 ? Array(digest.prefix(32)) : [UInt8](repeating: 0, count: 32 - digest.count) + digest
    }
}
