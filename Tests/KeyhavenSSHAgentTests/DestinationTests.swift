import Crypto
import FoundationEssentials
import KeyhavenSSHAgent
import Testing

/// `ssh-add -h` (`restrict-destination-v00@openssh.com`): a key listed and used only on the hops
/// its constraints allow, judged from the connection's verified session bindings as OpenSSH's
/// agent judges them.
@Suite struct DestinationTests {
    let hostA = Curve25519.Signing.PrivateKey()
    let hostB = Curve25519.Signing.PrivateKey()

    /// A hop's encoding: user, host name, reserved, then each key with whether it is a CA's.
    static func hop(user: String = "", host: String, keys: [Curve25519.Signing.PrivateKey]) -> [UInt8] {
        var writer = SSHWriter()
        writer.text(user); writer.text(host); writer.string([])
        for key in keys { writer.string(KeyringTests.blob(key)); writer.bool(false) }
        return writer.bytes
    }

    /// The extension's content: each constraint from a hop to a hop.
    static func constraints(_ pairs: [(from: [UInt8], to: [UInt8])]) -> [UInt8] {
        var outer = SSHWriter()
        for pair in pairs {
            var constraint = SSHWriter()
            constraint.string(pair.from); constraint.string(pair.to); constraint.string([])
            outer.string(constraint.bytes)
        }
        return outer.bytes
    }

    func bind(_ session: inout SSHAgentSession, host: Curve25519.Signing.PrivateKey, id: [UInt8], forwarded: Bool) throws {
        var signature = SSHWriter()
        signature.text("ssh-ed25519"); signature.string(Array(try host.signature(for: id)))
        var content = SSHWriter()
        content.string(KeyringTests.blob(host)); content.string(id); content.string(signature.bytes); content.bool(forwarded)
        guard case .success = session.reply(to: .extension(name: "session-bind@openssh.com", content: content.bytes)) else {
            Issue.record("the binding was refused"); return
        }
    }

    /// What ssh signs to log in as `user` on the session `id`, naming the host key.
    static func login(_ user: String, id: [UInt8], key: [UInt8], host: Curve25519.Signing.PrivateKey) -> [UInt8] {
        var writer = SSHWriter()
        writer.string(id); writer.byte(50); writer.text(user); writer.text("ssh-connection")
        writer.text("publickey-hostbound-v00@openssh.com"); writer.bool(true); writer.text("ssh-ed25519"); writer.string(key)
        writer.string(KeyringTests.blob(host))
        return writer.bytes
    }

    func restrictedSession(user: String = "") throws -> (SSHAgentSession, [UInt8]) {
        let keyring = SSHKeyring()
        let content = Self.constraints([(Self.hop(host: "", keys: []), Self.hop(user: user, host: "a.example", keys: [hostA]))])
        let (added, key) = KeyringTests.ed25519(comment: "restricted", constraints: [.restrictDestination(constraints: content)])
        try keyring.add(added)
        return (SSHAgentSession(keyring: keyring) { _ in true }, KeyringTests.blob(key))
    }

    func listed(_ session: inout SSHAgentSession) -> [String] {
        guard case .identities(let keys) = session.reply(to: .requestIdentities) else { return [] }
        return keys.map(\.comment)
    }

    @Test func aRestrictedKeySignsALoginToItsHostOnly() throws {
        var (session, key) = try restrictedSession()
        let id = [UInt8](repeating: 1, count: 32)
        // Unbound: listed (local use), but it signs no login.
        #expect(listed(&session) == ["restricted"])
        guard case .failure = session.reply(to: .sign(keyBlob: key, data: Self.login("me", id: id, key: key, host: hostA), flags: 0)) else {
            Issue.record("signed on an unbound connection"); return
        }
        try bind(&session, host: hostA, id: id, forwarded: false)
        guard case .signature = session.reply(to: .sign(keyBlob: key, data: Self.login("me", id: id, key: key, host: hostA), flags: 0)) else {
            Issue.record("refused its own host"); return
        }
        // Anything but a login, or a login naming another session or host key, is refused.
        guard case .failure = session.reply(to: .sign(keyBlob: key, data: Array("SSHSIG".utf8), flags: 0)),
              case .failure = session.reply(to: .sign(keyBlob: key, data: Self.login("me", id: [2], key: key, host: hostA), flags: 0)),
              case .failure = session.reply(to: .sign(keyBlob: key, data: Self.login("me", id: id, key: key, host: hostB), flags: 0)) else {
            Issue.record("signed what it may not"); return
        }
    }

    @Test func anotherHostSeesNothingAndCanRemoveNothing() throws {
        var (session, key) = try restrictedSession()
        let id = [UInt8](repeating: 3, count: 32)
        try bind(&session, host: hostB, id: id, forwarded: false)
        #expect(listed(&session).isEmpty)
        guard case .failure = session.reply(to: .sign(keyBlob: key, data: Self.login("me", id: id, key: key, host: hostB), flags: 0)),
              case .failure = session.reply(to: .removeIdentity(keyBlob: key)) else {
            Issue.record("host B used or removed a key restricted to A"); return
        }
        #expect(session.keyring.keys().count == 1)
    }

    @Test func theUserPatternAndForwardedHopsAreChecked() throws {
        var (session, key) = try restrictedSession(user: "dep*")
        let id = [UInt8](repeating: 4, count: 32)
        try bind(&session, host: hostA, id: id, forwarded: false)
        guard case .signature = session.reply(to: .sign(keyBlob: key, data: Self.login("deploy", id: id, key: key, host: hostA), flags: 0)),
              case .failure = session.reply(to: .sign(keyBlob: key, data: Self.login("root", id: id, key: key, host: hostA), flags: 0)) else {
            Issue.record("the user pattern was not applied"); return
        }
        // Through host A, forwarded, to host A again: no constraint allows A → A.
        var (forwarded, forwardedKey) = try restrictedSession()
        try bind(&forwarded, host: hostA, id: [5], forwarded: true)
        #expect(listed(&forwarded).isEmpty)
        try bind(&forwarded, host: hostA, id: [6], forwarded: false)
        guard case .failure = forwarded.reply(to: .sign(keyBlob: forwardedKey, data: Self.login("me", id: [6], key: forwardedKey, host: hostA),
                                                         flags: 0)) else {
            Issue.record("a hop no constraint allows was signed for"); return
        }
    }

    @Test func malformedConstraintsRefuseTheAdd() {
        let keyring = SSHKeyring()
        let noKeys = Self.constraints([(Self.hop(host: "", keys: []), Self.hop(host: "a.example", keys: []))])
        let fromUser = Self.constraints([(Self.hop(user: "x", host: "", keys: []), Self.hop(host: "a.example", keys: [hostA]))])
        for content in [noKeys, fromUser, [0, 0, 0, 5, 1]] {
            #expect(throws: SSHAgentError.self) {
                try keyring.add(KeyringTests.ed25519(constraints: [.restrictDestination(constraints: content)]).0)
            }
        }
        #expect(keyring.keys().isEmpty)
    }

    @Test(arguments: [("deploy", "dep*", true), ("deploy", "d?ploy", true), ("root", "dep*", false), ("abc", "*c", true),
                      ("abc", "a*b", false), ("", "*", true), ("aXbXc", "a*c", true)])
    func userPatternsMatchAsOpenSSHs(user: String, pattern: String, matches: Bool) throws {
        let constraints = try DestinationConstraint.read(Self.constraints([(Self.hop(host: "", keys: []),
                                                                            Self.hop(user: pattern, host: "a.example", keys: [hostA]))]))
        #expect(DestinationConstraint.permits(constraints, from: nil, to: nil, user: user) == matches)
    }

    /// A host certificate for `host`'s key, signed by `ca`, for `principals`, valid from `after` to `before`.
    static func hostCertificate(_ host: Curve25519.Signing.PrivateKey, ca: Curve25519.Signing.PrivateKey, principals: [String],
                                after: UInt64 = 0, before: UInt64 = .max) throws -> [UInt8] {
        var writer = SSHWriter()
        writer.text("ssh-ed25519-cert-v01@openssh.com"); writer.string([UInt8](repeating: 7, count: 32))
        writer.string(Array(host.publicKey.rawRepresentation))
        writer.uint32(0); writer.uint32(1); writer.uint32(2)  // serial 1, a host certificate
        writer.text("host")
        var names = SSHWriter()
        for principal in principals { names.text(principal) }
        writer.string(names.bytes)
        writer.uint32(UInt32(after >> 32)); writer.uint32(UInt32(truncatingIfNeeded: after))
        writer.uint32(UInt32(before >> 32)); writer.uint32(UInt32(truncatingIfNeeded: before))
        writer.string([]); writer.string([]); writer.string([])
        writer.string(KeyringTests.blob(ca))
        var signature = SSHWriter()
        signature.text("ssh-ed25519"); signature.string(Array(try ca.signature(for: writer.bytes)))
        writer.string(signature.bytes)
        return writer.bytes
    }

    func bind(_ session: inout SSHAgentSession, certificate: [UInt8], host: Curve25519.Signing.PrivateKey, id: [UInt8]) throws -> AgentReply {
        var signature = SSHWriter()
        signature.text("ssh-ed25519"); signature.string(Array(try host.signature(for: id)))
        var content = SSHWriter()
        content.string(certificate); content.string(id); content.string(signature.bytes); content.bool(false)
        return session.reply(to: .extension(name: "session-bind@openssh.com", content: content.bytes))
    }

    @Test func aHostCertificateMatchesAConstraintOnItsCAForItsName() throws {
        let ca = Curve25519.Signing.PrivateKey()
        func session() throws -> SSHAgentSession {
            let keyring = SSHKeyring()
            var hop = SSHWriter()
            hop.text(""); hop.text("c.example"); hop.string([]); hop.string(KeyringTests.blob(ca)); hop.bool(true)
            let content = Self.constraints([(Self.hop(host: "", keys: []), hop.bytes)])
            try keyring.add(KeyringTests.ed25519(comment: "certified-host", constraints: [.restrictDestination(constraints: content)]).0)
            return SSHAgentSession(keyring: keyring) { _ in true }
        }
        let host = Curve25519.Signing.PrivateKey()
        for (principals, before, listedThere) in [(["c.example"], UInt64.max, true), (["c.*"], .max, true), ([], .max, true),
                                                  (["other.example"], .max, false), (["c.example"], 1000, false)] {
            var bound = try session()
            let certificate = try Self.hostCertificate(host, ca: ca, principals: principals, before: before)
            guard case .success = try bind(&bound, certificate: certificate, host: host, id: [9]) else {
                Issue.record("a host certificate's binding was refused"); continue
            }
            #expect(listed(&bound) == (listedThere ? ["certified-host"] : []), "\(principals) \(before)")
        }
        // A certificate its CA did not sign, or signed by another CA, binds nothing or matches nothing.
        var forged = try Self.hostCertificate(host, ca: ca, principals: ["c.example"])
        forged[60] ^= 1
        var refused = try session()
        guard case .extensionFailure = try bind(&refused, certificate: forged, host: host, id: [9]) else {
            Issue.record("a certificate with a bad signature bound"); return
        }
        var otherCA = try session()
        _ = try bind(&otherCA, certificate: try Self.hostCertificate(host, ca: Curve25519.Signing.PrivateKey(), principals: ["c.example"]),
                     host: host, id: [9])
        #expect(listed(&otherCA).isEmpty)
    }
}
