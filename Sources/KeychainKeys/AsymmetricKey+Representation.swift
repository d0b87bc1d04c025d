import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

extension AsymmetricKey {
    /// Calls `body` with Apple's external representation (`SecKeyCopyExternalRepresentation`):
    /// X9.63 `04 || X || Y` (public) or `04 || X || Y || K` (private) for EC, PKCS#1 DER for RSA.
    /// A private representation is zeroed when `body` returns.
    package func withExternalRepresentation<R>(_ body: ([UInt8]) throws -> R) rethrows -> R {
        var bytes = externalRepresentationBytes()
        defer { zeroize(&bytes) }
        return try body(bytes)
    }

    private func externalRepresentationBytes() -> [UInt8] {
        switch self {
        case .ecPrivate(.p256(let key)): return Self.copyAndClear(key.x963Representation)
        case .ecPrivate(.p384(let key)): return Self.copyAndClear(key.x963Representation)
        case .ecPrivate(.p521(let key)): return Self.copyAndClear(key.x963Representation)
        case .rsaPrivate(let key): return Self.copyAndClear(key.derRepresentation)
        case .ecPublic, .rsaPublic: return Array(publicBytes)
        }
    }

    /// The bytes of `data` in an array, and `data`'s own buffer zeroed.
    static func copyAndClear(_ data: Data) -> [UInt8] {
        var data = data
        let bytes = Array(data)
        data.resetBytes(in: 0..<data.count)
        return bytes
    }

    /// A private key as PKCS#8 PEM ("PRIVATE KEY"), as OpenSSL writes it; "" for a public key.
    package var pkcs8PEM: String {
        switch self {
        case .ecPrivate(.p256(let key)): return key.pemRepresentation + "\n"
        case .ecPrivate(.p384(let key)): return key.pemRepresentation + "\n"
        case .ecPrivate(.p521(let key)): return key.pemRepresentation + "\n"
        case .rsaPrivate(let key): return key.pkcs8PEMRepresentation + "\n"
        case .ecPublic, .rsaPublic: return ""
        }
    }

    /// The public key as SubjectPublicKeyInfo PEM ("PUBLIC KEY"), as OpenSSL writes it.
    package var publicPEM: String {
        switch publicKey {
        case .ecPublic(.p256(let key)): return key.pemRepresentation + "\n"
        case .ecPublic(.p384(let key)): return key.pemRepresentation + "\n"
        case .ecPublic(.p521(let key)): return key.pemRepresentation + "\n"
        case .rsaPublic(let key): return key.pemRepresentation + "\n"
        case .ecPrivate, .rsaPrivate: return ""
        }
    }

    /// The public key as SubjectPublicKeyInfo DER (OpenSSL's public key format).
    package var subjectPublicKeyInfo: [UInt8] {
        switch publicKey {
        case .ecPublic(.p256(let key)): return Array(key.derRepresentation)
        case .ecPublic(.p384(let key)): return Array(key.derRepresentation)
        case .ecPublic(.p521(let key)): return Array(key.derRepresentation)
        case .rsaPublic(let key): return Array(key.derRepresentation)
        case .ecPrivate, .rsaPrivate: preconditionFailure("publicKey is public")
        }
    }

    /// A key from Apple's external representation (`SecKeyCreateWithData`).
    ///
    /// EC: the curve follows from the length (65/97/133 bytes public, 97/145/199 private), and a
    /// private key's public point must match its scalar. RSA: PKCS#1 (a public key may also come
    /// as SubjectPublicKeyInfo, which Apple accepts too), at least 1024 bits.
    package init(externalRepresentation bytes: [UInt8], keyType: Int, isPrivate: Bool) throws(KeyError) {
        switch keyType {
        case 73: self = try Self.ecKey(bytes, isPrivate: isPrivate)
        case 42: self = try Self.rsaKey(bytes, isPrivate: isPrivate)
        default: throw .param("kSecAttrKeyType \(keyType) is not a supported key type")
        }
    }

    private static func ecKey(_ bytes: [UInt8], isPrivate: Bool) throws(KeyError) -> AsymmetricKey {
        guard let curve = Curve(representationByteCount: bytes.count, isPrivate: isPrivate), bytes.first == 0x04 else {
            throw .param("EC key data is not an X9.63 \(isPrivate ? "private" : "public") key")
        }
        let key: AsymmetricKey
        do {
            switch (curve, isPrivate) {
            case (.p256, true): key = .ecPrivate(.p256(try .init(x963Representation: bytes)))
            case (.p384, true): key = .ecPrivate(.p384(try .init(x963Representation: bytes)))
            case (.p521, true): key = .ecPrivate(.p521(try .init(x963Representation: bytes)))
            case (.p256, false): key = .ecPublic(.p256(try .init(x963Representation: bytes)))
            case (.p384, false): key = .ecPublic(.p384(try .init(x963Representation: bytes)))
            case (.p521, false): key = .ecPublic(.p521(try .init(x963Representation: bytes)))
            }
        } catch {
            throw .param("EC key data is not a valid \(curve) key")
        }
        // A private representation carries its public point: it must be the scalar's.
        guard key.publicBytes.elementsEqual(bytes.prefix(curve.publicByteCount)) else {
            throw .param("EC key data's public point does not belong to its private scalar")
        }
        return key
    }

    private static func rsaKey(_ bytes: [UInt8], isPrivate: Bool) throws(KeyError) -> AsymmetricKey {
        do {
            if isPrivate {
                return .rsaPrivate(try _RSA.Signing.PrivateKey(unsafeDERRepresentation: bytes))
            }
            return .rsaPublic(try _RSA.Signing.PublicKey(unsafeDERRepresentation: bytes))
        } catch {
            throw .param("RSA key data is not a PKCS#1 \(isPrivate ? "private" : "public") key of 1024 bits or more")
        }
    }
}
