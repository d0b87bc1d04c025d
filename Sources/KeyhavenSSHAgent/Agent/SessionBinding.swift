/// A connection's binding to an SSH session (`session-bind@openssh.com`, OpenSSH's
/// PROTOCOL.agent): the host key that signed the session's identifier, so the agent knows where
/// a signature is about to be used.
package struct SessionBinding: Sendable {
    /// The destination's host key, whose signature over ``sessionID`` the agent verified.
    package let hostKey: SSHPublicKey
    package let sessionID: [UInt8]
    /// Whether the connection is a forwarded agent on that host (`ssh -A`), rather than the
    /// client that authenticates to it.
    package let forwarded: Bool

    /// The most bindings one connection records, as OpenSSH's agent allows.
    package static let maximumPerConnection = 16

    /// Reads and verifies a session-bind's content; nil when the signature is not the host key's.
    package static func verified(from content: [UInt8]) throws(SSHAgentError) -> SessionBinding? {
        var reader = SSHReader(content)
        let hostKey = try SSHPublicKey(blob: try reader.string())
        let sessionID = try reader.string()
        let signature = try reader.string()
        let forwarded = try reader.bool()
        try reader.finish()
        guard hostKey.isValidSignature(signature, for: sessionID) else { return nil }
        return SessionBinding(hostKey: hostKey, sessionID: sessionID, forwarded: forwarded)
    }
}
