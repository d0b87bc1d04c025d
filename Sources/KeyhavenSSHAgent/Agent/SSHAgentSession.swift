/// One client connection's side of the agent: its verified session bindings, and the answer to
/// each request it sends, over the keyring of the agent it reached.
///
/// A signature is given only when `decide` allows it: the host checks there who the client is
/// and asks the user for a key that confirms each use. Behaviour follows OpenSSH's agent where
/// the protocol leaves a choice: while locked, only an unlock, the identities (none) and the
/// extensions are answered; a connection bound for authentication cannot be bound again.
package struct SSHAgentSession {
    package let keyring: SSHKeyring
    private let decide: (KeyUse) -> Bool
    package private(set) var bindings: [SessionBinding] = []

    /// The extensions `query` names (the one it answers is implied).
    package static let extensions = ["session-bind@openssh.com"]

    /// `decide` runs on the connection's thread and may block while the user answers.
    package init(keyring: SSHKeyring, decide: @escaping (KeyUse) -> Bool) {
        self.keyring = keyring
        self.decide = decide
    }

    package mutating func reply(to request: AgentRequest) -> AgentReply {
        if keyring.isLocked {
            switch request {
            case .requestIdentities: return .identities([])
            case .unlock(let passphrase): return keyring.unlock(passphrase: passphrase) ? .success : .failure
            case .extension(let name, let content): return extensionReply(name: name, content: content, locked: true)
            default: return .failure
            }
        }
        switch request {
        case .requestIdentities:
            return .identities(keyring.keys().map { (keyBlob: $0.key.publicBlob, comment: $0.comment) })
        case .sign(let blob, let data, let flags):
            guard let held = keyring.key(blob: blob) else { return .failure }
            let use = KeyUse(key: held, destination: bindings.last, forwarded: bindings.contains { $0.forwarded },
                             namespace: KeyUse.sshsigNamespace(of: data))
            guard decide(use), let signature = try? held.key.signature(for: data, flags: flags) else { return .failure }
            return .signature(signature)
        case .addIdentity(let added):
            return (try? keyring.add(added)) != nil ? .success : .failure
        case .removeIdentity(let blob):
            return keyring.remove(blob: blob) ? .success : .failure
        case .removeAllIdentities:
            return keyring.removeAll() ? .success : .failure
        case .lock(let passphrase):
            return keyring.lock(passphrase: passphrase) ? .success : .failure
        case .unlock:
            return .failure
        case .smartcard, .unknown:
            return .failure
        case .extension(let name, let content):
            return extensionReply(name: name, content: content, locked: false)
        }
    }

    private mutating func extensionReply(name: String, content: [UInt8], locked: Bool) -> AgentReply {
        switch name {
        case "session-bind@openssh.com":
            return bind(content) ? .success : .extensionFailure
        case "query" where !locked:
            var names = SSHWriter()
            for name in Self.extensions { names.text(name) }
            return .extensionResponse(name: name, content: names.bytes)
        default:
            return .failure
        }
    }

    /// Records a verified binding. Refused: a bad signature; a connection already bound for
    /// authentication (only a forwarded agent is bound hop after hop); a session identifier
    /// already bound to another host key; more than ``SessionBinding/maximumPerConnection``.
    private mutating func bind(_ content: [UInt8]) -> Bool {
        guard let binding = try? SessionBinding.verified(from: content) else { return false }
        for earlier in bindings {
            guard earlier.forwarded else { return false }
            if earlier.sessionID == binding.sessionID { return earlier.hostKey == binding.hostKey }
        }
        guard bindings.count < SessionBinding.maximumPerConnection else { return false }
        bindings.append(binding)
        return true
    }
}
