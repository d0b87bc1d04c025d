/// The private key of an add request, as the protocol carries it per key type (RFC 9987,
/// section 3.2.3; OpenSSH's PROTOCOL.certkeys for certificates).
package enum PrivateKeyFields: Sendable, CustomStringConvertible {
    /// `ssh-ed25519`: the public key A (32 bytes), and k || A (64 bytes).
    case ed25519(publicKey: [UInt8], secret: SecretBytes)
    /// `ecdsa-sha2-nistp256`, `-nistp384`, `-nistp521`: the curve's name, the public point Q and
    /// the private scalar d.
    case ecdsa(curve: String, publicPoint: [UInt8], scalar: SecretBytes)
    /// `ssh-rsa`: n, e, d, iqmp, p and q.
    case rsa(modulus: [UInt8], publicExponent: [UInt8], privateExponent: SecretBytes, iqmp: SecretBytes,
             p: SecretBytes, q: SecretBytes)
    /// A certificate type (`ssh-ed25519-cert-v01@openssh.com`, ...): the certificate, whose
    /// public key is the key's, and the private fields the type carries after it.
    case certified(type: String, certificate: [UInt8], secrets: [SecretBytes])

    static let ecdsaCurves = ["ecdsa-sha2-nistp256": "nistp256", "ecdsa-sha2-nistp384": "nistp384", "ecdsa-sha2-nistp521": "nistp521"]

    /// Reads the fields of `keyType`.
    static func read(keyType: String, _ reader: inout SSHReader) throws(SSHAgentError) -> PrivateKeyFields {
        switch keyType {
        case "ssh-ed25519":
            let publicKey = try reader.string()
            let secret = SecretBytes(try reader.string())
            guard publicKey.count == 32, secret.count == 64 else { throw SSHAgentError(.malformed, "an Ed25519 key of the wrong size") }
            return .ed25519(publicKey: publicKey, secret: secret)
        case let type where ecdsaCurves[type] != nil:
            let curve = try reader.text()
            guard curve == ecdsaCurves[type] else { throw SSHAgentError(.malformed, "an ECDSA key whose curve is not its type's") }
            return .ecdsa(curve: curve, publicPoint: try reader.string(), scalar: SecretBytes(try reader.mpint()))
        case "ssh-rsa":
            return .rsa(modulus: try reader.mpint(), publicExponent: try reader.mpint(), privateExponent: SecretBytes(try reader.mpint()),
                        iqmp: SecretBytes(try reader.mpint()), p: SecretBytes(try reader.mpint()), q: SecretBytes(try reader.mpint()))
        case "ssh-ed25519-cert-v01@openssh.com":
            let certificate = try reader.string()
            _ = try reader.string()  // A again: the certificate holds it
            let secret = SecretBytes(try reader.string())
            guard secret.count == 64 else { throw SSHAgentError(.malformed, "an Ed25519 key of the wrong size") }
            return .certified(type: keyType, certificate: certificate, secrets: [secret])
        case "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com",
             "ecdsa-sha2-nistp521-cert-v01@openssh.com":
            return .certified(type: keyType, certificate: try reader.string(), secrets: [SecretBytes(try reader.mpint())])
        case "ssh-rsa-cert-v01@openssh.com":
            let certificate = try reader.string()
            var secrets: [SecretBytes] = []
            for _ in 0..<4 { secrets.append(SecretBytes(try reader.mpint())) }  // d, iqmp, p, q
            return .certified(type: keyType, certificate: certificate, secrets: secrets)
        default:
            throw SSHAgentError(.unsupported, "key type \(keyType) is not one the agent holds")
        }
    }

    package var description: String {
        switch self {
        case .ed25519: return "ssh-ed25519 private key"
        case .ecdsa(let curve, _, _): return "ecdsa-sha2-\(curve) private key"
        case .rsa: return "ssh-rsa private key"
        case .certified(let type, _, _): return "\(type) private key"
        }
    }
}
