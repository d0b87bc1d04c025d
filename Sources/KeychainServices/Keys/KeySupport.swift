import Crypto
import KeychainKeys

/// Which (key, operation, algorithm) combinations work: `SecKeyIsAlgorithmSupported`.
///
/// As Apple's key operations do, a private key verifies and encrypts through its public half.
/// SHA-224 (not in swift-crypto), RSA OAEP with SHA-384/512, raw RSA and MD5 are not supported.
enum KeySupport {
    static func supports(_ kind: KeyKind, isPrivate: Bool, _ operation: SecKeyOperationType, _ algorithm: KeyAlgorithm) -> Bool {
        guard !usesSHA224(algorithm) else { return false }
        let isEC: Bool
        switch kind {
        case .ec: isEC = true
        case .rsa: isEC = false
        }
        switch (operation, algorithm) {
        case (.sign, .ecdsa), (.verify, .ecdsa):
            return isEC && (operation == .verify || isPrivate)
        case (.sign, .rsaPKCS1v15Signature(let input)), (.sign, .rsaPSSSignature(let input)),
             (.verify, .rsaPKCS1v15Signature(let input)), (.verify, .rsaPSSSignature(let input)):
            return !isEC && (operation == .verify || isPrivate) && rsaDigestUsable(input)
        case (.encrypt, .rsaPKCS1Encryption), (.decrypt, .rsaPKCS1Encryption):
            return !isEC && (operation == .encrypt || isPrivate)
        case (.encrypt, .rsaOAEPEncryption(let hash)), (.decrypt, .rsaOAEPEncryption(let hash)):
            return !isEC && (operation == .encrypt || isPrivate) && (hash == .sha1 || hash == .sha256)
        case (.encrypt, .ecies), (.decrypt, .ecies):
            return isEC && (operation == .encrypt || isPrivate)
        case (.keyExchange, .ecdh):
            return isEC && isPrivate
        default:
            return false
        }
    }

    private static func usesSHA224(_ algorithm: KeyAlgorithm) -> Bool {
        switch algorithm {
        case .ecdsa(.message(.sha224), _), .ecdsa(.digest(.sha224), _), .rsaPKCS1v15Signature(.message(.sha224)),
             .rsaPKCS1v15Signature(.digest(.sha224)), .rsaPSSSignature(.message(.sha224)), .rsaPSSSignature(.digest(.sha224)),
             .rsaOAEPEncryption(.sha224), .ecdh(kdf: .sha224), .ecies(.sha224, _):
            return true
        default:
            return false
        }
    }

    /// RSA signatures go through swift-crypto digest values; see `DigestValue`.
    private static func rsaDigestUsable(_ input: KeyAlgorithm.Input) -> Bool {
        switch input {
        case .message(let hash), .digest(let hash?): return DigestValue.isSupported(hash)
        case .digest(nil): return false
        }
    }
}
