import Crypto
import FoundationEssentials
import _CryptoExtras

extension AsymmetricKey {
    /// Signs `input` (a message or a digest, as `algorithm` says) with this private key.
    package func sign(_ algorithm: KeyAlgorithm, _ input: [UInt8]) throws(KeyError) -> [UInt8] {
        switch (algorithm, self) {
        case (.ecdsa(let how, let raw), .ecPrivate(let key)):
            let digest = ProvidedDigest(try Self.digestBytes(how, input))
            return try Self.ecdsaSign(key, digest, raw: raw)
        case (.rsaPKCS1v15Signature(let how), .rsaPrivate(let key)):
            return try Self.rsaSign(key, how, input, padding: .insecurePKCS1v1_5)
        case (.rsaPSSSignature(let how), .rsaPrivate(let key)):
            return try Self.rsaSign(key, how, input, padding: .PSS)
        default:
            throw unsupported(algorithm, for: "signing")
        }
    }

    /// Checks `signature` over `input` with this public key (a private key checks with its
    /// public half, as Apple's does). Throws `verificationFailed` when it does not verify.
    package func verify(_ algorithm: KeyAlgorithm, _ input: [UInt8], signature: [UInt8]) throws(KeyError) {
        let valid: Bool
        switch (algorithm, publicKey) {
        case (.ecdsa(let how, let raw), .ecPublic(let key)):
            let digest = ProvidedDigest(try Self.digestBytes(how, input))
            valid = Self.ecdsaVerify(key, digest, signature: signature, raw: raw)
        case (.rsaPKCS1v15Signature(let how), .rsaPublic(let key)):
            valid = try Self.rsaVerify(key, how, input, signature, padding: .insecurePKCS1v1_5)
        case (.rsaPSSSignature(let how), .rsaPublic(let key)):
            valid = try Self.rsaVerify(key, how, input, signature, padding: .PSS)
        default:
            throw unsupported(algorithm, for: "verifying")
        }
        guard valid else { throw KeyError(.verificationFailed, "the signature does not verify") }
    }

    func unsupported(_ algorithm: KeyAlgorithm, for operation: String) -> KeyError {
        KeyError(.unsupportedAlgorithm, "algorithm not supported by the key for \(operation)")
    }

    /// The digest to sign: the message hashed, or the caller's digest of the right length.
    static func digestBytes(_ input: KeyAlgorithm.Input, _ bytes: [UInt8]) throws(KeyError) -> [UInt8] {
        switch input {
        case .message(let hash):
            guard let digest = DigestValue.hash(hash, bytes) else {
                throw KeyError(.unsupportedAlgorithm, "\(hash.rawValue) is not supported")
            }
            return digest
        case .digest(let hash?):
            guard bytes.count == hash.byteCount else {
                throw .param("the digest is \(bytes.count) bytes; \(hash.rawValue) digests are \(hash.byteCount)")
            }
            return bytes
        case .digest(nil):
            guard !bytes.isEmpty else { throw .param("the digest is empty") }
            return bytes
        }
    }

    private static func ecdsaSign(_ key: ECPrivateKey, _ digest: ProvidedDigest, raw: Bool) throws(KeyError) -> [UInt8] {
        do {
            switch key {
            case .p256(let k): let s = try k.signature(for: digest); return Array(raw ? s.rawRepresentation : s.derRepresentation)
            case .p384(let k): let s = try k.signature(for: digest); return Array(raw ? s.rawRepresentation : s.derRepresentation)
            case .p521(let k): let s = try k.signature(for: digest); return Array(raw ? s.rawRepresentation : s.derRepresentation)
            }
        } catch {
            throw .param("ECDSA signing failed")
        }
    }

    private static func ecdsaVerify(_ key: ECPublicKey, _ digest: ProvidedDigest, signature: [UInt8], raw: Bool) -> Bool {
        switch key {
        case .p256(let k):
            guard let s = try? (raw ? P256.Signing.ECDSASignature(rawRepresentation: signature)
                                    : P256.Signing.ECDSASignature(derRepresentation: signature)) else { return false }
            return k.isValidSignature(s, for: digest)
        case .p384(let k):
            guard let s = try? (raw ? P384.Signing.ECDSASignature(rawRepresentation: signature)
                                    : P384.Signing.ECDSASignature(derRepresentation: signature)) else { return false }
            return k.isValidSignature(s, for: digest)
        case .p521(let k):
            guard let s = try? (raw ? P521.Signing.ECDSASignature(rawRepresentation: signature)
                                    : P521.Signing.ECDSASignature(derRepresentation: signature)) else { return false }
            return k.isValidSignature(s, for: digest)
        }
    }

    private static func hashName(_ input: KeyAlgorithm.Input) -> HashName {
        switch input {
        case .message(let hash), .digest(let hash?): return hash
        case .digest(nil): return .sha256  // not produced by the parser for RSA
        }
    }

    private static func rsaSign(_ key: _RSA.Signing.PrivateKey, _ how: KeyAlgorithm.Input, _ input: [UInt8],
                                padding: _RSA.Signing.Padding) throws(KeyError) -> [UInt8] {
        let digest = try digestBytes(how, input)
        return try DigestValue.withDigest(hashName(how), digest) { (value) throws(KeyError) -> [UInt8] in
            do {
                return Array(try key.signature(for: value, padding: padding).rawRepresentation)
            } catch {
                throw .param("the key is too small for this RSA signature")
            }
        }
    }

    private static func rsaVerify(_ key: _RSA.Signing.PublicKey, _ how: KeyAlgorithm.Input, _ input: [UInt8],
                                  _ signature: [UInt8], padding: _RSA.Signing.Padding) throws(KeyError) -> Bool {
        let digest = try digestBytes(how, input)
        return try DigestValue.withDigest(hashName(how), digest) { (value) throws(KeyError) -> Bool in
            key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: value, padding: padding)
        }
    }
}
