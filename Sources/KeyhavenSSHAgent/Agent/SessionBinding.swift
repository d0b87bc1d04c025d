/// A connection's binding to an SSH session (`session-bind@openssh.com`, OpenSSH's
/// PROTOCOL.agent): the host key that signed the session's identifier, so the agent knows where
/// a signature is about to be used.
package struct SessionBinding: Sendable {
    /// The destination's host key, whose signature over ``sessionID`` the agent verified (for a
    /// host with a certificate, the certified key).
    package let hostKey: SSHPublicKey
    /// The host's key as it sent it: the key's blob, or its certificate's.
    package let hostKeyBlob: [UInt8]
    /// The host's certificate, its CA's signature verified, when it proved itself with one.
    package let certificate: SSHCertificate?
    package let sessionID: [UInt8]
    /// Whether the connection is a forwarded agent on that host (`ssh -A`), rather than the
    /// client that authenticates to it.
    package let forwarded: Bool

    /// The most bindings one connection records, as OpenSSH's agent allows.
    package static let maximumPerConnection = 16

    /// Reads and verifies a session-bind's content; nil when the signature is not the host key's.
    package static func verified(from content: [UInt8]) throws(SSHAgentError) -> SessionBinding? {
        var reader = SSHReader(content)
        let blob = try reader.string()
        let certificate = SSHCertificate.isCertificate(blob) ? try SSHCertificate(blob: blob) : nil
        let hostKey: SSHPublicKey
        if let certificate { hostKey = certificate.key } else { hostKey = try SSHPublicKey(blob: blob) }
        let sessionID = try reader.string()
        let signature = try reader.string()
        let forwarded = try reader.bool()
        try reader.finish()
        guard hostKey.isValidSignature(signature, for: sessionID) else { return nil }
        return SessionBinding(hostKey: hostKey, hostKeyBlob: blob, certificate: certificate, sessionID: sessionID, forwarded: forwarded)
    }
}
