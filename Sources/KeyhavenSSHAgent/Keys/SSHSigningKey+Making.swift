import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

/// Making swift-crypto keys from the protocol's fields, each checked against its public half.
extension SSHSigningKey {
    static let mismatch = SSHAgentError(.malformed, "the private key does not match its public key")

    static func ed25519(_ secret: SecretBytes, publicKey: [UInt8]) throws(SSHAgentError) -> Algorithm {
        let key = secret.withBytes { try? Curve25519.Signing.PrivateKey(rawRepresentation: $0.prefix(32)) }
        guard let key, Array(key.publicKey.rawRepresentation) == publicKey else { throw mismatch }
        return .ed25519(key)
    }

    static func ecdsa(curve: String, scalar: SecretBytes, point: [UInt8]) throws(SSHAgentError) -> Algorithm {
        // The scalar, left-padded to the curve's size, in a copy that is zeroed once the key is made.
        func key<Key>(_ size: Int, _ make: ([UInt8]) throws -> Key) -> Key? {
            scalar.withBytes { bytes in
                guard bytes.count <= size else { return nil }
                var padded = [UInt8](repeating: 0, count: size - bytes.count) + bytes
                defer { zeroize(&padded) }
                return try? make(padded)
            }
        }
        let algorithm: Algorithm?
        let derived: Data?
        switch curve {
        case "nistp256":
            let key = key(32) { try P256.Signing.PrivateKey(rawRepresentation: $0) }
            (algorithm, derived) = (key.map(Algorithm.p256), key?.publicKey.x963Representation)
        case "nistp384":
            let key = key(48) { try P384.Signing.PrivateKey(rawRepresentation: $0) }
            (algorithm, derived) = (key.map(Algorithm.p384), key?.publicKey.x963Representation)
        case "nistp521":
            let key = key(66) { try P521.Signing.PrivateKey(rawRepresentation: $0) }
            (algorithm, derived) = (key.map(Algorithm.p521), key?.publicKey.x963Representation)
        default:
            throw SSHAgentError(.unsupported, "curve \(curve) is not one the agent holds")
        }
        guard let algorithm, let derived, Array(derived) == point else { throw mismatch }
        return algorithm
    }

    static func rsa(n: [UInt8], e: [UInt8], d: SecretBytes, p: SecretBytes, q: SecretBytes) throws(SSHAgentError) -> Algorithm {
        let key = d.withBytes { d in p.withBytes { p in q.withBytes { q in try? _RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q) } } }
        guard let key else { throw SSHAgentError(.unsupported, "an RSA key the agent cannot hold (it takes 2048 bits or more)") }
        return .rsa(key)
    }

    /// A certificate's key: its public fields from the certificate (after its type and nonce),
    /// its private ones from the request.
    static func certified(type: String, certificate: [UInt8], secrets: [SecretBytes]) throws(SSHAgentError) -> Algorithm {
        var reader = SSHReader(certificate)
        guard try reader.text() == type else { throw SSHAgentError(.malformed, "the certificate is not of its key's type") }
        _ = try reader.string()  // nonce
        switch (type, secrets.count) {
        case ("ssh-ed25519-cert-v01@openssh.com", 1):
            return try ed25519(secrets[0], publicKey: try reader.string())
        case (let ecdsa, 1) where ecdsa.hasPrefix("ecdsa-sha2-"):
            let curve = try reader.text()
            return try Self.ecdsa(curve: curve, scalar: secrets[0], point: try reader.string())
        case ("ssh-rsa-cert-v01@openssh.com", 4):
            let e = try reader.mpint()
            let n = try reader.mpint()
            return try rsa(n: n, e: e, d: secrets[0], p: secrets[2], q: secrets[3])
        default:
            throw SSHAgentError(.malformed, "a certificate without its private key's fields")
        }
    }
}
