import Crypto
import FoundationEssentials
import KeyhavenSSHAgent
import Testing

/// The keyring's rules (lifetimes, replacing, the lock) and a connection's answers (session
/// binds, `query`, what a locked agent answers), without sockets.
@Suite struct KeyringTests {
    static func ed25519(comment: String = "k", constraints: [KeyConstraint] = []) -> (AgentRequest.AddedKey, Curve25519.Signing.PrivateKey) {
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = Array(key.publicKey.rawRepresentation)
        let fields = PrivateKeyFields.ed25519(publicKey: publicKey, secret: SecretBytes(Array(key.rawRepresentation) + publicKey))
        return (AgentRequest.AddedKey(keyType: "ssh-ed25519", key: fields, comment: comment, constraints: constraints), key)
    }

    static func blob(_ key: Curve25519.Signing.PrivateKey) -> [UInt8] {
        var writer = SSHWriter()
        writer.text("ssh-ed25519")
        writer.string(Array(key.publicKey.rawRepresentation))
        return writer.bytes
    }

    @Test func keysExpireAtTheirLifetimeAndTheAgentsDefault() throws {
        let start = ContinuousClock.now
        let keyring = SSHKeyring(defaultLifetime: 100)
        let (short, _) = Self.ed25519(comment: "short", constraints: [.lifetime(seconds: 10)])
        let (long, _) = Self.ed25519(comment: "default")
        try keyring.add(short, at: start)
        try keyring.add(long, at: start)
        #expect(keyring.keys(at: start + .seconds(9)).map(\.comment) == ["short", "default"])
        #expect(keyring.keys(at: start + .seconds(10)).map(\.comment) == ["default"])
        #expect(keyring.keys(at: start + .seconds(100)).isEmpty)
    }

    @Test func addingAKeyAgainReplacesItsConstraints() throws {
        let keyring = SSHKeyring()
        let (first, key) = Self.ed25519(comment: "first", constraints: [.confirm])
        try keyring.add(first)
        let publicKey = Array(key.publicKey.rawRepresentation)
        let again = AgentRequest.AddedKey(keyType: "ssh-ed25519", key: .ed25519(publicKey: publicKey, secret: SecretBytes(Array(key.rawRepresentation) + publicKey)),
                                          comment: "again", constraints: [])
        try keyring.add(again)
        let held = keyring.keys()
        #expect(held.count == 1 && held[0].comment == "again" && !held[0].confirm)
    }

    @Test func constraintsTheAgentCannotHonourRefuseTheAdd() {
        let keyring = SSHKeyring()
        #expect(throws: SSHAgentError.self) { try keyring.add(Self.ed25519(constraints: [.restrictDestination(constraints: [0, 0, 0, 9])]).0) }
        #expect(throws: SSHAgentError.self) { try keyring.add(Self.ed25519(constraints: [.securityKeyProvider("internal")]).0) }
        #expect(keyring.keys().isEmpty)
    }

    @Test func aLockedKeyringListsAndSignsNothingUntilItsPassphrase() throws {
        let keyring = SSHKeyring()
        let (added, key) = Self.ed25519()
        try keyring.add(added)
        var session = SSHAgentSession(keyring: keyring) { _ in true }
        #expect(keyring.lock(passphrase: SecretBytes(Array("right".utf8))))
        #expect(!keyring.lock(passphrase: SecretBytes(Array("again".utf8))))
        guard case .identities(let none) = session.reply(to: .requestIdentities) else { Issue.record("no identities answer"); return }
        #expect(none.isEmpty)
        guard case .failure = session.reply(to: .sign(keyBlob: Self.blob(key), data: [1], flags: 0)) else { Issue.record("signed while locked"); return }
        guard case .failure = session.reply(to: .removeAllIdentities) else { Issue.record("removed while locked"); return }
        guard case .failure = session.reply(to: .unlock(passphrase: SecretBytes(Array("wrong".utf8)))) else { Issue.record("a wrong passphrase unlocked"); return }
        guard case .success = session.reply(to: .unlock(passphrase: SecretBytes(Array("right".utf8)))) else { Issue.record("did not unlock"); return }
        guard case .signature(let signature) = session.reply(to: .sign(keyBlob: Self.blob(key), data: [1], flags: 0)) else {
            Issue.record("no signature after unlocking"); return
        }
        var reader = SSHReader(signature)
        #expect(try reader.text() == "ssh-ed25519")
        #expect(key.publicKey.isValidSignature(try reader.string(), for: [1]))
    }

    @Test func aSignatureTheHostRefusesIsAFailureAndTheHostSeesItsNamespace() throws {
        let keyring = SSHKeyring()
        let (added, key) = Self.ed25519(constraints: [.confirm])
        try keyring.add(added)
        var seen: [KeyUse] = []
        var session = SSHAgentSession(keyring: keyring) { use in
            seen.append(use)
            return false
        }
        var sshsig = SSHWriter()
        sshsig.text("git"); sshsig.string([]); sshsig.text("sha512"); sshsig.string([UInt8](repeating: 7, count: 64))
        guard case .failure = session.reply(to: .sign(keyBlob: Self.blob(key), data: Array("SSHSIG".utf8) + sshsig.bytes, flags: 0)) else {
            Issue.record("signed without the host's leave"); return
        }
        #expect(seen.map(\.namespace) == ["git"])
        #expect(seen.first?.confirm == true)
    }

    @Test func sessionBindsAreVerifiedAndAnAuthenticationBindingIsFinal() throws {
        var session = SSHAgentSession(keyring: SSHKeyring()) { _ in true }
        let host = Curve25519.Signing.PrivateKey()
        let sessionID = [UInt8](repeating: 9, count: 32)
        func bind(_ id: [UInt8], signedBy signer: Curve25519.Signing.PrivateKey, forwarded: Bool) throws -> AgentReply {
            var signature = SSHWriter()
            signature.text("ssh-ed25519")
            signature.string(Array(try signer.signature(for: id)))
            var content = SSHWriter()
            content.string(Self.blob(host)); content.string(id); content.string(signature.bytes); content.byte(forwarded ? 1 : 0)
            return session.reply(to: .extension(name: "session-bind@openssh.com", content: content.bytes))
        }
        guard case .extensionFailure = try bind(sessionID, signedBy: Curve25519.Signing.PrivateKey(), forwarded: true) else {
            Issue.record("a binding signed by another key was taken"); return
        }
        guard case .success = try bind(sessionID, signedBy: host, forwarded: true) else { Issue.record("a good binding was refused"); return }
        guard case .success = try bind(sessionID, signedBy: host, forwarded: true) else { Issue.record("the same binding again was refused"); return }
        guard case .success = try bind([UInt8](repeating: 8, count: 32), signedBy: host, forwarded: false) else {
            Issue.record("a forwarded connection could not bind its next hop"); return
        }
        guard case .extensionFailure = try bind([UInt8](repeating: 7, count: 32), signedBy: host, forwarded: false) else {
            Issue.record("a connection bound for authentication was bound again"); return
        }
        #expect(session.bindings.count == 2)
        #expect(session.bindings.last?.hostKey.fingerprint == (try SSHPublicKey(blob: Self.blob(host))).fingerprint)
    }

    @Test func queryNamesTheExtensions() throws {
        var session = SSHAgentSession(keyring: SSHKeyring()) { _ in true }
        guard case .extensionResponse(let name, let content) = session.reply(to: .extension(name: "query", content: [])) else {
            Issue.record("no query answer"); return
        }
        var reader = SSHReader(content)
        #expect(name == "query")
        #expect(try reader.text() == "session-bind@openssh.com")
        #expect(reader.isAtEnd)
        guard case .failure = session.reply(to: .extension(name: "nonexistent@example.com", content: [])) else {
            Issue.record("an unknown extension did not fail"); return
        }
    }

    @Test func knownHostsNamesAHostKeyAndSkipsHashedAndRevokedLines() throws {
        let host = Curve25519.Signing.PrivateKey()
        let key = try SSHPublicKey(blob: Self.blob(host))
        let encoded = Data(key.blob).base64EncodedString()
        let file = KnownHosts(contents: """
            # comment
            github.com,140.82.121.3 ssh-ed25519 \(encoded)
            |1|abc=|def= ssh-ed25519 \(encoded)
            @revoked evil.example ssh-ed25519 \(encoded)
            other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE
            [git.example]:2222 ssh-ed25519 \(encoded) comment
            """)
        #expect(file.names(for: key) == ["github.com", "140.82.121.3", "[git.example]:2222"])
    }
}
