import Crypto
import FoundationEssentials
import _CryptoExtras

/// An elliptic curve private key on one of the NIST curves.
package enum ECPrivateKey: Sendable {
    case p256(P256.Signing.PrivateKey)
    case p384(P384.Signing.PrivateKey)
    case p521(P521.Signing.PrivateKey)
}

/// An elliptic curve public key on one of the NIST curves.
package enum ECPublicKey: Sendable {
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)
    case p521(P521.Signing.PublicKey)
}

/// An asymmetric key: what a `SecKey` holds. Key material stays inside swift-crypto's objects,
/// whose BoringSSL allocations are zeroed when freed; representations that leave them are
/// zeroed by the callers that make them (`withExternalRepresentation`).
package enum AsymmetricKey: Sendable {
    case ecPrivate(ECPrivateKey)
    case ecPublic(ECPublicKey)
    case rsaPrivate(_RSA.Signing.PrivateKey)
    case rsaPublic(_RSA.Signing.PublicKey)

    /// A new random private key of `kind`.
    package static func generate(_ kind: KeyKind) throws(KeyError) -> AsymmetricKey {
        switch kind {
        case .ec(.p256): return .ecPrivate(.p256(P256.Signing.PrivateKey()))
        case .ec(.p384): return .ecPrivate(.p384(P384.Signing.PrivateKey()))
        case .ec(.p521): return .ecPrivate(.p521(P521.Signing.PrivateKey()))
        case .rsa(let bits):
            guard KeyKind.isGeneratableRSASize(bits) else {
                throw .param("RSA keys are 1024 to 8192 bits in steps of 8, not \(bits)")
            }
            do {
                return .rsaPrivate(try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: bits)))
            } catch {
                throw .param("an RSA key of \(bits) bits could not be generated")
            }
        }
    }

    /// Whether this is a private key.
    package var isPrivate: Bool {
        switch self {
        case .ecPrivate, .rsaPrivate: return true
        case .ecPublic, .rsaPublic: return false
        }
    }

    /// The key's algorithm family and size.
    package var kind: KeyKind {
        switch self {
        case .ecPrivate(.p256), .ecPublic(.p256): return .ec(.p256)
        case .ecPrivate(.p384), .ecPublic(.p384): return .ec(.p384)
        case .ecPrivate(.p521), .ecPublic(.p521): return .ec(.p521)
        case .rsaPrivate(let key): return .rsa(bits: key.keySizeInBits)
        case .rsaPublic(let key): return .rsa(bits: key.keySizeInBits)
        }
    }

    /// The public half (a public key is its own).
    package var publicKey: AsymmetricKey {
        switch self {
        case .ecPrivate(.p256(let key)): return .ecPublic(.p256(key.publicKey))
        case .ecPrivate(.p384(let key)): return .ecPublic(.p384(key.publicKey))
        case .ecPrivate(.p521(let key)): return .ecPublic(.p521(key.publicKey))
        case .rsaPrivate(let key): return .rsaPublic(key.publicKey)
        case .ecPublic, .rsaPublic: return self
        }
    }

    /// Apple's public key bytes: X9.63 `04 || X || Y` for EC, PKCS#1 RSAPublicKey DER for RSA.
    package var publicBytes: Data {
        switch publicKey {
        case .ecPublic(.p256(let key)): return key.x963Representation
        case .ecPublic(.p384(let key)): return key.x963Representation
        case .ecPublic(.p521(let key)): return key.x963Representation
        case .rsaPublic(let key): return key.pkcs1DERRepresentation
        case .ecPrivate, .rsaPrivate: preconditionFailure("publicKey is public")
        }
    }

    /// `kSecAttrApplicationLabel` as Apple computes it: SHA-1 of the public key bytes.
    package var applicationLabel: Data {
        Data(Insecure.SHA1.hash(data: publicBytes))
    }

    /// Whether two keys are the same key (Apple's `CFEqual` on keys: same class and bytes).
    package func isSameKey(as other: AsymmetricKey) -> Bool {
        isPrivate == other.isPrivate && kind == other.kind && publicBytes == other.publicBytes
    }
}
