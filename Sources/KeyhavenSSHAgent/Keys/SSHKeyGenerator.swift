import Crypto
import FoundationEssentials
import KeychainModel
import SwiftASN1
import _CryptoExtras

/// New SSH keys, made by swift-crypto (`keyhaven ssh new-key`), in the protocol's fields.
package enum SSHKeyGenerator {
    package enum KeyType: String, Sendable, CaseIterable {
        case ed25519, ecdsa, rsa
    }

    /// A new key of `type`; `bits` chooses ECDSA's curve (256, 384, 521) or RSA's size (2048,
    /// 3072, 4096); nil takes 256 and 3072.
    package static func generate(_ type: KeyType, bits: Int? = nil) throws(SSHAgentError) -> (keyType: String, fields: PrivateKeyFields) {
        switch type {
        case .ed25519:
            guard bits == nil || bits == 256 else { throw SSHAgentError(.unsupported, "Ed25519 keys have 256 bits") }
            let key = Curve25519.Signing.PrivateKey()
            let publicKey = Array(key.publicKey.rawRepresentation)
            var secret = Array(key.rawRepresentation) + publicKey
            defer { zeroize(&secret) }
            return ("ssh-ed25519", .ed25519(publicKey: publicKey, secret: SecretBytes(secret)))
        case .ecdsa:
            let (point, scalar): ([UInt8], Data)
            switch bits ?? 256 {
            case 256:
                let key = P256.Signing.PrivateKey()
                (point, scalar) = (Array(key.publicKey.x963Representation), key.rawRepresentation)
            case 384:
                let key = P384.Signing.PrivateKey()
                (point, scalar) = (Array(key.publicKey.x963Representation), key.rawRepresentation)
            case 521:
                let key = P521.Signing.PrivateKey()
                (point, scalar) = (Array(key.publicKey.x963Representation), key.rawRepresentation)
            default:
                throw SSHAgentError(.unsupported, "ECDSA keys have 256, 384 or 521 bits")
            }
            var copy = Array(scalar)
            defer { zeroize(&copy) }
            let curve = "nistp\(bits ?? 256)"
            return ("ecdsa-sha2-\(curve)", .ecdsa(curve: curve, publicPoint: point, scalar: SecretBytes(copy)))
        case .rsa:
            let size: _RSA.Signing.KeySize
            switch bits ?? 3072 {
            case 2048: size = .bits2048
            case 3072: size = .bits3072
            case 4096: size = .bits4096
            default: throw SSHAgentError(.unsupported, "RSA keys have 2048, 3072 or 4096 bits")
            }
            let key: _RSA.Signing.PrivateKey
            do { key = try _RSA.Signing.PrivateKey(keySize: size) } catch { throw SSHAgentError(.unsupported, "the RSA key could not be made") }
            var der = Array(key.derRepresentation)  // PKCS#1 RSAPrivateKey
            defer { zeroize(&der) }
            return ("ssh-rsa", try rsaFields(pkcs1: der))
        }
    }

    /// n, e, d, iqmp, p and q from an RSAPrivateKey (RFC 8017, appendix A.1.2).
    static func rsaFields(pkcs1 der: [UInt8]) throws(SSHAgentError) -> PrivateKeyFields {
        do {
            let values = try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
                guard try Int(derEncoded: &nodes) == 0 else { throw ASN1Error.invalidASN1Object(reason: "not a two-prime key") }
                return try (0..<8).map { _ in Array(try ArraySlice<UInt8>(derEncoded: &nodes)) }
            }
            // n, e, d, p, q, dP, dQ, qInv; the protocol carries n, e, d, iqmp, p, q.
            return .rsa(modulus: values[0], publicExponent: values[1], privateExponent: SecretBytes(values[2]),
                        iqmp: SecretBytes(values[7]), p: SecretBytes(values[3]), q: SecretBytes(values[4]))
        } catch {
            throw SSHAgentError(.malformed, "the RSA key's encoding could not be read")
        }
    }
}
