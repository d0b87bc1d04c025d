import FoundationEssentials

/// An OpenSSH certificate (PROTOCOL.certkeys): a key, vouched for by a certificate authority's
/// signature, for some principals and a period. The agent reads host certificates, the keys with
/// which hosts prove themselves in a session binding, to match them against `ssh-add -h`
/// constraints that name the host's CA.
package struct SSHCertificate: Sendable, Equatable {
    package enum Kind: UInt32, Sendable {
        case user = 1
        case host = 2
    }

    /// The certified key, as a plain key.
    package let key: SSHPublicKey
    package let kind: Kind
    package let principals: [String]
    /// The validity period, in seconds since 1970 (`validBefore` excluded).
    package let validAfter: UInt64
    package let validBefore: UInt64
    package let hasCriticalOptions: Bool
    /// The CA key whose signature over the certificate was verified.
    package let signatureKey: SSHPublicKey

    static let suffix = "-cert-v01@openssh.com"

    /// Whether `blob` names a certificate type.
    package static func isCertificate(_ blob: [UInt8]) -> Bool {
        var reader = SSHReader(blob)
        return (try? reader.text())?.hasSuffix(suffix) ?? false
    }

    /// Reads a certificate and verifies its CA's signature; a malformed certificate, or one whose
    /// signature does not verify, is refused.
    package init(blob: [UInt8]) throws(SSHAgentError) {
        var reader = SSHReader(blob)
        let type = try reader.text()
        guard type.hasSuffix(Self.suffix) else { throw SSHAgentError(.malformed, "not a certificate") }
        let keyType = String(type.dropLast(Self.suffix.count))
        _ = try reader.string()  // nonce
        var plain = SSHWriter()
        plain.text(keyType)
        switch keyType {
        case "ssh-ed25519":
            plain.string(try reader.string())
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
            plain.string(try reader.string())
            plain.string(try reader.string())
        case "ssh-rsa":
            plain.string(try reader.string())  // e and n, as mpints: copied as they are
            plain.string(try reader.string())
        default:
            throw SSHAgentError(.unsupported, "a certificate of a key type the agent does not know")
        }
        key = try SSHPublicKey(blob: plain.bytes)
        _ = try reader.uint64()  // serial
        guard let kind = Kind(rawValue: try reader.uint32()) else { throw SSHAgentError(.malformed, "a certificate of an unknown type") }
        self.kind = kind
        _ = try reader.string()  // key id
        var names = SSHReader(try reader.string())
        var principals: [String] = []
        while !names.isAtEnd { principals.append(try names.text()) }
        self.principals = principals
        validAfter = try reader.uint64()
        validBefore = try reader.uint64()
        hasCriticalOptions = !(try reader.string()).isEmpty
        _ = try reader.string()  // extensions
        _ = try reader.string()  // reserved
        signatureKey = try SSHPublicKey(blob: try reader.string())
        let signature = try reader.string()
        try reader.finish()
        guard !SSHCertificate.isCertificate(signatureKey.blob),
              signatureKey.isValidSignature(signature, for: Array(blob.prefix(blob.count - 4 - signature.count))) else {
            throw SSHAgentError(.malformed, "the certificate's signature does not verify")
        }
    }

    /// OpenSSH's `sshkey_cert_check_host`: a host certificate, valid now, without critical
    /// options, whose principals (when it lists any) match `hostname` (as patterns).
    package func isValid(forHost hostname: String?, at now: UInt64 = UInt64(max(0, Date().timeIntervalSince1970))) -> Bool {
        guard kind == .host, !hasCriticalOptions, validAfter <= now, now < validBefore else { return false }
        guard !principals.isEmpty else { return true }
        guard let hostname else { return false }
        return principals.contains { DestinationConstraint.matches(hostname, pattern: $0) }
    }
}
