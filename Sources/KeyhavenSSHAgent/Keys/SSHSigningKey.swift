import Crypto
import FoundationEssentials
import _CryptoExtras

/// A key the agent signs with, made from an add request's private fields (swift-crypto's keys,
/// which keep their material in BoringSSL's zeroed memory), with the public blob clients name it
/// by: the key's (RFC 4253, section 6.6; RFC 8709 for Ed25519; RFC 5656 for ECDSA) or its
/// certificate's (OpenSSH's PROTOCOL.certkeys).
package struct SSHSigningKey: Sendable {
    package enum Algorithm: Sendable {
        case ed25519(Curve25519.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case p521(P521.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    package let algorithm: Algorithm
    /// The blob `ssh-add -L` shows and sign requests name: the key's, or its certificate's.
    package let publicBlob: [UInt8]

    /// The key an add request carries; a private half that does not match its public half (or its
    /// certificate's) is refused.
    package init(_ fields: PrivateKeyFields) throws(SSHAgentError) {
        switch fields {
        case .ed25519(let publicKey, let secret):
            algorithm = try Self.ed25519(secret, publicKey: publicKey)
            publicBlob = Self.blob("ssh-ed25519") { $0.string(publicKey) }
        case .ecdsa(let curve, let point, let scalar):
            algorithm = try Self.ecdsa(curve: curve, scalar: scalar, point: point)
            publicBlob = Self.blob("ecdsa-sha2-\(curve)") { $0.text(curve); $0.string(point) }
        case .rsa(let modulus, let exponent, let d, _, let p, let q):
            algorithm = try Self.rsa(n: modulus, e: exponent, d: d, p: p, q: q)
            publicBlob = Self.blob("ssh-rsa") { $0.mpint(exponent); $0.mpint(modulus) }
        case .certified(let type, let certificate, let secrets):
            algorithm = try Self.certified(type: type, certificate: certificate, secrets: secrets)
            publicBlob = certificate
        }
    }

    /// The SSH signature (RFC 4253, section 6.6) over `data`; for RSA, `flags` choose SHA-512 or
    /// SHA-256 (RFC 8332), else SHA-1 (`ssh-rsa`).
    package func signature(for data: [UInt8], flags: UInt32) throws(SSHAgentError) -> [UInt8] {
        do {
            switch algorithm {
            case .ed25519(let key):
                let signature = try key.signature(for: data)
                return Self.blob("ssh-ed25519") { $0.string(Array(signature)) }
            case .p256(let key): return Self.ecdsaSignature("nistp256", try key.signature(for: data).rawRepresentation)
            case .p384(let key): return Self.ecdsaSignature("nistp384", try key.signature(for: data).rawRepresentation)
            case .p521(let key): return Self.ecdsaSignature("nistp521", try key.signature(for: data).rawRepresentation)
            case .rsa(let key):
                let (name, signature): (String, _RSA.Signing.RSASignature)
                if flags & AgentRequest.rsaSHA512 != 0 {
                    (name, signature) = ("rsa-sha2-512", try key.signature(for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5))
                } else if flags & AgentRequest.rsaSHA256 != 0 {
                    (name, signature) = ("rsa-sha2-256", try key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5))
                } else {
                    (name, signature) = ("ssh-rsa", try key.signature(for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5))
                }
                return Self.blob(name) { $0.string(Array(signature.rawRepresentation)) }
            }
        } catch {
            throw SSHAgentError(.unsupported, "the key could not sign")
        }
    }

    static func blob(_ name: String, _ fields: (inout SSHWriter) throws -> Void) rethrows -> [UInt8] {
        var writer = SSHWriter()
        writer.text(name)
        try fields(&writer)
        return writer.bytes
    }

    /// r and s as mpints (RFC 5656, section 3.1.2), from swift-crypto's r || s.
    package static func ecdsaSignature(_ curve: String, _ raw: Data) -> [UInt8] {
        let half = raw.count / 2
        var inner = SSHWriter()
        inner.mpint(Array(raw.prefix(half)))
        inner.mpint(Array(raw.suffix(half)))
        return blob("ecdsa-sha2-\(curve)") { $0.string(inner.bytes) }
    }
}
