import KeychainModel

/// The private key in the protocol's own encoding (its type's name, then its fields, as an add
/// request carries them): how a key kept in a keychain is stored (``SSHKeyItem``).
extension PrivateKeyFields {
    /// The key type's name and fields; the caller zeroes the bytes once stored.
    package func encoded(keyType: String) -> [UInt8] {
        var writer = SSHWriter(capacity: 16 << 10)
        writer.text(keyType)
        switch self {
        case .ed25519(let publicKey, let secret):
            writer.string(publicKey)
            secret.withBytes { writer.string($0) }
        case .ecdsa(let curve, let point, let scalar):
            writer.text(curve)
            writer.string(point)
            scalar.withBytes { writer.mpint($0) }
        case .rsa(let modulus, let exponent, let d, let iqmp, let p, let q):
            writer.mpint(modulus)
            writer.mpint(exponent)
            for secret in [d, iqmp, p, q] { secret.withBytes { writer.mpint($0) } }
        case .certified(let type, let certificate, let secrets):
            writer.string(certificate)
            if type == "ssh-ed25519-cert-v01@openssh.com" {
                secrets[0].withBytes { writer.string(Array($0.suffix(32))) }  // A, which the certificate holds too
                secrets[0].withBytes { writer.string($0) }
            } else {
                for secret in secrets { secret.withBytes { writer.mpint($0) } }
            }
        }
        return writer.bytes
    }

    /// The key ``encoded(keyType:)`` wrote, read back as an add request's is.
    package static func decoded(_ bytes: [UInt8]) throws(SSHAgentError) -> (keyType: String, fields: PrivateKeyFields) {
        var reader = SSHReader(bytes)
        let keyType = try reader.text()
        let fields = try read(keyType: keyType, &reader)
        try reader.finish()
        return (keyType, fields)
    }
}
