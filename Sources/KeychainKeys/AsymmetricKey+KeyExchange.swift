import Crypto
import FoundationEssentials

extension AsymmetricKey {
    /// ECDH between this private key and `peer`'s public key; with a KDF, the shared secret goes
    /// through ANSI X9.63 with `sharedInfo` to `requestedSize` bytes (Apple requires the size).
    package func exchange(_ algorithm: KeyAlgorithm, with peer: AsymmetricKey, requestedSize: Int?,
                          sharedInfo: [UInt8]) throws(KeyError) -> [UInt8] {
        guard case .ecdh(let kdf) = algorithm, case .ecPrivate(let own) = self else {
            throw unsupported(algorithm, for: "key exchange")
        }
        guard case .ecPublic(let theirs) = peer.publicKey, peer.kind == kind else {
            throw .param("the other key is not a public key on the same curve")
        }
        return try Self.derive(.crypto(try Self.agreement(own, theirs)), kdf: kdf, requestedSize: requestedSize, sharedInfo: sharedInfo)
    }

    /// Apple's key exchange result from the agreed secret: the secret itself, or with a KDF its
    /// X9.63 derivation to `requestedSize` bytes (Apple requires the size).
    static func derive(_ shared: AgreedSecret, kdf: HashName?, requestedSize: Int?, sharedInfo: [UInt8]) throws(KeyError) -> [UInt8] {
        guard let kdf else { return shared.rawBytes }
        guard let requestedSize, requestedSize > 0, requestedSize <= 1 << 20 else {
            throw .param("kSecKeyKeyExchangeParameterRequestedSize is missing")
        }
        return try shared.x963(kdf, sharedInfo: sharedInfo, byteCount: requestedSize)
    }

    /// The ECDH shared secret (its bytes are the x-coordinate, Apple's `algid:keyexchange:ECDH`).
    static func agreement(_ own: ECPrivateKey, _ theirs: ECPublicKey) throws(KeyError) -> SharedSecret {
        do {
            switch (own, theirs) {
            case (.p256(let a), .p256(let b)):
                return try P256.KeyAgreement.PrivateKey(rawRepresentation: a.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: P256.KeyAgreement.PublicKey(rawRepresentation: b.rawRepresentation))
            case (.p384(let a), .p384(let b)):
                return try P384.KeyAgreement.PrivateKey(rawRepresentation: a.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: P384.KeyAgreement.PublicKey(rawRepresentation: b.rawRepresentation))
            case (.p521(let a), .p521(let b)):
                return try P521.KeyAgreement.PrivateKey(rawRepresentation: a.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: P521.KeyAgreement.PublicKey(rawRepresentation: b.rawRepresentation))
            default:
                break
            }
        } catch {
            throw .param("the key exchange failed")
        }
        throw .param("the keys are on different curves")
    }

    /// ANSI X9.63 KDF over `shared` (swift-crypto's `x963DerivedSymmetricKey`), by Apple's hash names.
    static func x963(_ hash: HashName, _ shared: SharedSecret, sharedInfo: [UInt8], byteCount: Int) throws(KeyError) -> [UInt8] {
        let key: SymmetricKey
        switch hash {
        case .sha1: key = shared.x963DerivedSymmetricKey(using: Insecure.SHA1.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha224: throw KeyError(.unsupportedAlgorithm, "SHA-224 is not supported")
        case .sha256: key = shared.x963DerivedSymmetricKey(using: SHA256.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha384: key = shared.x963DerivedSymmetricKey(using: SHA384.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha512: key = shared.x963DerivedSymmetricKey(using: SHA512.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        }
        return key.withUnsafeBytes { Array($0) }
    }
}
