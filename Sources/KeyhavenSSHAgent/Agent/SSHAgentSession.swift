/// One client connection's side of the agent: its verified session bindings, and the answer to
/// each request it sends, over the keyring of the agent it reached and, for an agent that keeps
/// keys in a keychain, that keychain's (``SSHKeyVault``).
///
/// With a vault, a key added without a lifetime is kept in the keychain; one with a lifetime
/// (`ssh-add -t`, the agent's `-t`) is held in memory only, for that long. The agent's lock
/// (`ssh-add -x`) hides both.
///
/// A signature is given only when `decide` allows it: the host checks there who the client is
/// and asks the user for a key that confirms each use. Behaviour follows OpenSSH's agent where
/// the protocol leaves a choice: while locked, only an unlock, the identities (none) and the
/// extensions are answered; a connection bound for authentication cannot be bound again.
package struct SSHAgentSession {
    package let keyring: SSHKeyring
    private let vault: (any SSHKeyVault)?
    private let decide: (KeyUse) -> Bool
    private let signed: (KeyUse) -> Void
    package private(set) var bindings: [SessionBinding] = []

    /// The extensions `query` names (the one it answers is implied).
    package static let extensions = ["session-bind@openssh.com"]

    /// `decide` runs on the connection's thread and may block while the user answers; `signed`
    /// hears of each signature given, after it is made.
    package init(keyring: SSHKeyring, vault: (any SSHKeyVault)? = nil, signed: @escaping (KeyUse) -> Void = { _ in },
                 decide: @escaping (KeyUse) -> Bool) {
        self.keyring = keyring
        self.vault = vault
        self.signed = signed
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
            // A key restricted to destinations is listed only where it may be used (OpenSSH's rule).
            var listed = keyring.keys().filter { permitted($0.destinations, user: nil) }.map { (keyBlob: $0.key.publicBlob, comment: $0.comment) }
            for kept in vault?.keys() ?? [] where !listed.contains(where: { $0.keyBlob == kept.publicBlob }) {
                listed.append((kept.publicBlob, kept.comment))
            }
            return .identities(listed)
        case .sign(let blob, let data, let flags):
            return sign(blob: blob, data: data, flags: flags).map(AgentReply.signature) ?? .failure
        case .addIdentity(let added):
            return add(added) ? .success : .failure
        case .removeIdentity(let blob):
            if let held = keyring.key(blob: blob), !permitted(held.destinations, user: nil) { return .failure }
            let held = keyring.remove(blob: blob)
            let kept = vault?.remove(blob: blob) ?? false
            return held || kept ? .success : .failure
        case .removeAllIdentities:
            guard keyring.removeAll() else { return .failure }
            _ = vault?.remove(blob: nil)
            return .success
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

    private func sign(blob: [UInt8], data: [UInt8], flags: UInt32) -> [UInt8]? {
        let (destination, forwarded, namespace) = (bindings.last, bindings.contains { $0.forwarded }, KeyUse.sshsigNamespace(of: data))
        if let held = keyring.key(blob: blob) {
            guard held.destinations.isEmpty || mayLogIn(with: held, data: data) else { return nil }
            let use = KeyUse(publicBlob: blob, comment: held.comment, confirm: held.confirm, destination: destination,
                             forwarded: forwarded, namespace: namespace)
            guard decide(use), let signature = try? held.key.signature(for: data, flags: flags) else { return nil }
            signed(use)
            return signature
        }
        guard let vault, let kept = vault.keys().first(where: { $0.publicBlob == blob }), kept.allows(namespace: namespace) else { return nil }
        let use = KeyUse(publicBlob: blob, comment: kept.comment, confirm: kept.confirm, destination: destination,
                         forwarded: forwarded, namespace: namespace)
        guard decide(use), let signature = vault.sign(kept, data: data, flags: flags) else { return nil }
        signed(use)
        return signature
    }

    /// An add goes to the vault unless it has a lifetime or destinations (or there is no vault).
    /// A key held already that this connection may not use is not replaced.
    private func add(_ added: AgentRequest.AddedKey) -> Bool {
        // Made once here: a key that does not match its public half fails the add at once.
        guard let blob = try? SSHSigningKey(added.key).publicBlob else { return false }
        if let held = keyring.key(blob: blob), !permitted(held.destinations, user: nil) { return false }
        guard let vault, let options = try? SSHKeyring.options(of: added, defaultLifetime: keyring.defaultLifetime),
              options.lifetime == nil, options.destinations.isEmpty else {
            return (try? keyring.add(added)) != nil
        }
        guard (try? vault.keep(added, confirm: options.confirm)) != nil else { return false }
        // The same key held in memory before (with a lifetime) is the kept one's from now on.
        _ = keyring.remove(blob: blob)
        return true
    }

    /// Whether a destination-restricted key may sign `data` here: only a login (a userauth
    /// request) on a bound connection, for a user and over hops its constraints allow, whose
    /// session is the one bound last and, past the first hop, whose host key is that binding's.
    private func mayLogIn(with held: SSHKeyring.HeldKey, data: [UInt8]) -> Bool {
        guard let last = bindings.last, let request = UserAuthRequest(data, keyBlob: held.key.publicBlob),
              permitted(held.destinations, user: request.user), request.sessionID == last.sessionID else { return false }
        if bindings.count > 1 && request.hostKeyBlob == nil { return false }
        if let hostKey = request.hostKeyBlob, hostKey != last.hostKeyBlob { return false }
        return true
    }

    /// OpenSSH's `identity_permitted`: every hop the connection's bindings record must be one a
    /// constraint allows, from the origin on; only the last may be for authentication (`user`
    /// is checked there, for a signature). Without `user` (a listing), a connection last bound for
    /// forwarding sees only keys allowed beyond that host. An unbound connection is local use.
    func permitted(_ destinations: [DestinationConstraint], user: String?) -> Bool {
        guard !destinations.isEmpty, !bindings.isEmpty else { return true }
        var from: SessionBinding?
        for (index, binding) in bindings.enumerated() {
            let isLast = index == bindings.count - 1
            if isLast {
                if binding.forwarded && user != nil { return false }
            } else if !binding.forwarded {
                return false
            }
            guard DestinationConstraint.permits(destinations, from: from, to: binding, user: isLast ? user : nil) else { return false }
            from = binding
        }
        if let last = bindings.last, last.forwarded, user == nil,
           !DestinationConstraint.permits(destinations, from: last, to: nil, user: nil) {
            return false
        }
        return true
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
            if earlier.sessionID == binding.sessionID { return earlier.hostKeyBlob == binding.hostKeyBlob }
        }
        guard bindings.count < SessionBinding.maximumPerConnection else { return false }
        bindings.append(binding)
        return true
    }
}
