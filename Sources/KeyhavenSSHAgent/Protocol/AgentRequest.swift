/// One request from an agent client (`ssh`, `ssh-add`, `git`), as the protocol frames it
/// (RFC 9987; OpenSSH's PROTOCOL.agent).
package enum AgentRequest: Sendable {
    /// The keys the agent holds (`ssh-add -l`, and every `ssh` before it signs).
    case requestIdentities
    /// Sign `data` with the key whose public blob is `keyBlob`; `flags` choose RSA's hash.
    case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
    /// Hold a private key (`ssh-add FILE`), with the constraints of a constrained add.
    case addIdentity(AddedKey)
    case removeIdentity(keyBlob: [UInt8])
    case removeAllIdentities
    /// Lock or unlock the agent with a passphrase (`ssh-add -x`, `-X`).
    case lock(passphrase: SecretBytes)
    case unlock(passphrase: SecretBytes)
    /// A PKCS#11 token's keys (`ssh-add -s`, `-e`): the agent holds no token keys.
    case smartcard(add: Bool)
    /// An extension by name (`query`, `session-bind@openssh.com`), its content unread.
    case `extension`(name: String, content: [UInt8])
    /// A message number the agent does not know: answered with a failure (RFC 9987).
    case unknown(type: UInt8)

    /// An add request: the key, its comment and its constraints.
    package struct AddedKey: Sendable {
        package let keyType: String
        package let key: PrivateKeyFields
        package let comment: String
        package let constraints: [KeyConstraint]

        package init(keyType: String, key: PrivateKeyFields, comment: String, constraints: [KeyConstraint]) {
            (self.keyType, self.key, self.comment, self.constraints) = (keyType, key, comment, constraints)
        }
    }

    /// RSA signature flags (RFC 9987, section 3.6.1).
    package static let rsaSHA256: UInt32 = 2
    package static let rsaSHA512: UInt32 = 4

    /// Reads one message's body (its type byte and contents, without the length).
    package init(message: [UInt8]) throws(SSHAgentError) {
        var reader = SSHReader(message)
        let type = try reader.byte()
        switch type {
        case MessageType.requestIdentities: self = .requestIdentities
        case MessageType.signRequest:
            self = .sign(keyBlob: try reader.string(), data: try reader.string(), flags: try reader.uint32())
        case MessageType.addIdentity, MessageType.addIdentityConstrained:
            let keyType = try reader.text()
            let key = try PrivateKeyFields.read(keyType: keyType, &reader)
            let comment = String(decoding: try reader.string(), as: UTF8.self)
            let constraints = type == MessageType.addIdentityConstrained ? try KeyConstraint.readAll(&reader) : []
            self = .addIdentity(AddedKey(keyType: keyType, key: key, comment: comment, constraints: constraints))
        case MessageType.removeIdentity: self = .removeIdentity(keyBlob: try reader.string())
        case MessageType.removeAllIdentities: self = .removeAllIdentities
        case MessageType.lock: self = .lock(passphrase: SecretBytes(try reader.string()))
        case MessageType.unlock: self = .unlock(passphrase: SecretBytes(try reader.string()))
        case MessageType.addSmartcardKey, MessageType.addSmartcardKeyConstrained:
            _ = reader.rest()
            self = .smartcard(add: true)
        case MessageType.removeSmartcardKey:
            _ = reader.rest()
            self = .smartcard(add: false)
        case MessageType.extension: self = .extension(name: try reader.text(), content: reader.rest())
        default:
            _ = reader.rest()
            self = .unknown(type: type)
        }
        try reader.finish()
    }
}
