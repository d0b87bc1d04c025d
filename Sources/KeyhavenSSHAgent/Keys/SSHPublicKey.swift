import Crypto
import FoundationEssentials
import _CryptoExtras

/// A public key in SSH's encoding (RFC 4253, section 6.6): a host key that signs a session-bind,
/// or a key a client names. It verifies SSH signatures and gives OpenSSH's fingerprint.
package struct SSHPublicKey: Sendable, Equatable {
    /// The key's blob, as it was read.
    package let blob: [UInt8]
    /// The key's type name (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`).
    package let type: String

    package init(blob: [UInt8]) throws(SSHAgentError) {
        var reader = SSHReader(blob)
        type = try reader.text()
        self.blob = blob
        _ = try verifier(reading: &reader)
        try reader.finish()
    }

    /// OpenSSH's fingerprint: `SHA256:` and the blob's digest in unpadded base64.
    package var fingerprint: String { Self.fingerprint(of: blob) }

    /// OpenSSH's fingerprint of any key or certificate blob.
    package static func fingerprint(of blob: [UInt8]) -> String {
        let digest = Data(SHA256.hash(data: blob)).base64EncodedString()
        return "SHA256:" + digest.prefix { $0 != "=" }
    }

    /// Whether `signature` (an SSH signature blob: its algorithm's name, then the bytes) is this
    /// key's over `data`. RSA takes `rsa-sha2-256` and `rsa-sha2-512` only: SHA-1 signatures
    /// bind nothing a host key vouches for today.
    package func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        var reader = SSHReader(blob)
        guard (try? reader.text()) != nil, let verify = try? verifier(reading: &reader) else { return false }
        var signatureReader = SSHReader(signature)
        guard let algorithm = try? signatureReader.text(), let bytes = try? signatureReader.string(),
              (try? signatureReader.finish()) != nil else { return false }
        return verify(algorithm, bytes, data)
    }

    private typealias Verifier = (_ algorithm: String, _ signature: [UInt8], _ data: [UInt8]) -> Bool

    private func verifier(reading reader: inout SSHReader) throws(SSHAgentError) -> Verifier {
        let unusable = SSHAgentError(.malformed, "a \(type) public key that does not parse")
        switch type {
        case "ssh-ed25519":
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: try reader.string()) else { throw unusable }
            return { algorithm, signature, data in algorithm == "ssh-ed25519" && key.isValidSignature(signature, for: data) }
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
            let curve = try reader.text()
            guard type == "ecdsa-sha2-" + curve else { throw unusable }
            let point = try reader.string()
            guard let verify = Self.ecdsa(curve: curve, point: point) else { throw unusable }
            return { algorithm, signature, data in algorithm == self.type && verify(signature, data) }
        case "ssh-rsa":
            let e = try reader.mpint()
            let n = try reader.mpint()
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { throw unusable }
            return { algorithm, signature, data in
                let rsa = _RSA.Signing.RSASignature(rawRepresentation: signature)
                switch algorithm {
                case "rsa-sha2-256": return key.isValidSignature(rsa, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
                case "rsa-sha2-512": return key.isValidSignature(rsa, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
                default: return false
                }
            }
        default:
            throw SSHAgentError(.unsupported, "key type \(type) is not one the agent verifies")
        }
    }

    /// An ECDSA verifier: the signature's r and s (mpints, RFC 5656) over the curve's hash.
    private static func ecdsa(curve: String, point: [UInt8]) -> (([UInt8], [UInt8]) -> Bool)? {
        func rs(_ signature: [UInt8], size: Int) -> [UInt8]? {
            var reader = SSHReader(signature)
            guard let r = try? reader.mpint(), let s = try? reader.mpint(), reader.isAtEnd, r.count <= size, s.count <= size else { return nil }
            return [UInt8](repeating: 0, count: size - r.count) + r + [UInt8](repeating: 0, count: size - s.count) + s
        }
        switch curve {
        case "nistp256":
            guard let key = try? P256.Signing.PublicKey(x963Representation: point) else { return nil }
            return { signature, data in
                guard let raw = rs(signature, size: 32), let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else { return false }
                return key.isValidSignature(parsed, for: data)
            }
        case "nistp384":
            guard let key = try? P384.Signing.PublicKey(x963Representation: point) else { return nil }
            return { signature, data in
                guard let raw = rs(signature, size: 48), let parsed = try? P384.Signing.ECDSASignature(rawRepresentation: raw) else { return false }
                return key.isValidSignature(parsed, for: data)
            }
        case "nistp521":
            guard let key = try? P521.Signing.PublicKey(x963Representation: point) else { return nil }
            return { signature, data in
                guard let raw = rs(signature, size: 66), let parsed = try? P521.Signing.ECDSASignature(rawRepresentation: raw) else { return false }
                return key.isValidSignature(parsed, for: data)
            }
        default:
            return nil
        }
    }
}
