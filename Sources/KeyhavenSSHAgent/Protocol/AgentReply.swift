/// One answer of the agent (RFC 9987, section 6.1).
package enum AgentReply: Sendable {
    case success
    case failure
    /// The keys held: each public blob with its comment.
    case identities([(keyBlob: [UInt8], comment: String)])
    case signature([UInt8])
    /// An extension's own answer (SSH_AGENT_EXTENSION_RESPONSE): `query`'s list of names.
    case extensionResponse(name: String, content: [UInt8])
    /// An extension the agent knows failed (not one it does not know: that is `failure`).
    case extensionFailure

    /// The framed message: its length, then its type and contents.
    package var encoded: [UInt8] {
        var body = SSHWriter()
        switch self {
        case .success: body.byte(MessageType.success)
        case .failure: body.byte(MessageType.failure)
        case .identities(let keys):
            body.byte(MessageType.identitiesAnswer)
            body.uint32(UInt32(keys.count))
            for key in keys {
                body.string(key.keyBlob)
                body.text(key.comment)
            }
        case .signature(let signature):
            body.byte(MessageType.signResponse)
            body.string(signature)
        case .extensionResponse(let name, let content):
            body.byte(MessageType.extensionResponse)
            body.text(name)
            return Self.framed(body.bytes + content)
        case .extensionFailure: body.byte(MessageType.extensionFailure)
        }
        return Self.framed(body.bytes)
    }

    static func framed(_ body: [UInt8]) -> [UInt8] {
        var frame = SSHWriter()
        frame.uint32(UInt32(body.count))
        return frame.bytes + body
    }
}
