import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

extension AsymmetricKey {
    /// Encrypts `plaintext` for this key's owner (a private key encrypts to its public half).
    package func encrypt(_ algorithm: KeyAlgorithm, _ plaintext: [UInt8]) throws(KeyError) -> [UInt8] {
        switch (algorithm, publicKey) {
        case (.rsaPKCS1Encryption, .rsaPublic(let key)), (.rsaOAEPEncryption, .rsaPublic(let key)):
            let padding = try Self.rsaPadding(algorithm)
            do {
                let encryptionKey = try _RSA.Encryption.PublicKey(unsafeDERRepresentation: key.derRepresentation)
                return Array(try encryptionKey.encrypt(plaintext, padding: padding))
            } catch {
                throw .param("the plaintext is too long for this RSA key and padding")
            }
        case (.ecies(let hash, let variableIV), .ecPublic(let key)):
            return try ECIES(hash: hash, variableIV: variableIV).encrypt(plaintext, to: key)
        default:
            throw unsupported(algorithm, for: "encryption")
        }
    }

    /// Decrypts `ciphertext` with this private key.
    package func decrypt(_ algorithm: KeyAlgorithm, _ ciphertext: [UInt8]) throws(KeyError) -> [UInt8] {
        switch (algorithm, self) {
        case (.rsaPKCS1Encryption, .rsaPrivate(let key)), (.rsaOAEPEncryption, .rsaPrivate(let key)):
            let padding = try Self.rsaPadding(algorithm)
            guard ciphertext.count == kind.blockSize else {
                throw KeyError(.decryptionFailed, "RSA ciphertext must be \(kind.blockSize) bytes")
            }
            do {
                let decryptionKey = try Self.withPrivateDER(key) { try _RSA.Encryption.PrivateKey(unsafeDERRepresentation: $0) }
                return Self.copyAndClear(try decryptionKey.decrypt(ciphertext, padding: padding))
            } catch {
                throw KeyError(.decryptionFailed, "the ciphertext does not decrypt with this key")
            }
        case (.ecies(let hash, let variableIV), .ecPrivate(let key)):
            return try ECIES(hash: hash, variableIV: variableIV).decrypt(ciphertext, with: key)
        default:
            throw unsupported(algorithm, for: "decryption")
        }
    }

    private static func rsaPadding(_ algorithm: KeyAlgorithm) throws(KeyError) -> _RSA.Encryption.Padding {
        switch algorithm {
        case .rsaPKCS1Encryption: return ._WEAK_AND_INSECURE_PKCS_V1_5
        case .rsaOAEPEncryption(.sha1): return .PKCS1_OAEP
        case .rsaOAEPEncryption(.sha256): return .PKCS1_OAEP_SHA256
        case .rsaOAEPEncryption(let hash):
            throw KeyError(.unsupportedAlgorithm, "RSA OAEP with \(hash.rawValue) is not supported (SHA-1 and SHA-256 are)")
        default:
            throw .param("not an RSA encryption algorithm")
        }
    }

    /// Calls `body` with the private key's PKCS#1 DER, zeroed afterwards.
    static func withPrivateDER<R>(_ key: _RSA.Signing.PrivateKey, _ body: ([UInt8]) throws -> R) rethrows -> R {
        var der = copyAndClear(key.derRepresentation)
        defer { zeroize(&der) }
        return try body(der)
    }
}
