import Crypto
import FoundationEssentials
import KeyhavenSSHAgent
import Synchronization
import Testing

/// How a connection divides keys between the agent's keyring and a keychain (``SSHKeyVault``),
/// and the key item's encoding, without sockets or a keychain.
@Suite struct KeyVaultTests {
    /// A vault in memory that records what it is asked.
    final class MemoryVault: SSHKeyVault {
        struct State {
            var items: [(item: SSHKeyItem, secret: [UInt8])] = []
            var signed: [String] = []
        }
        let state = Mutex(State())

        func keys() -> [SSHKeyItem] { state.withLock { $0.items.map(\.item) } }

        func sign(_ item: SSHKeyItem, data: [UInt8], flags: UInt32) -> [UInt8]? {
            state.withLock { state in
                state.signed.append(item.comment)
                guard let secret = state.items.first(where: { $0.item == item })?.secret,
                      let key = try? SSHSigningKey(PrivateKeyFields.decoded(secret).fields) else { return nil }
                return try? key.signature(for: data, flags: flags)
            }
        }

        func keep(_ added: AgentRequest.AddedKey, confirm: Bool) throws(SSHAgentError) {
            let key = try SSHSigningKey(added.key)
            let item = SSHKeyItem(publicBlob: key.publicBlob, comment: added.comment, confirm: confirm, origin: .added)
            state.withLock { $0.items.append((item, added.key.encoded(keyType: added.keyType))) }
        }

        func remove(blob: [UInt8]?) -> Bool {
            state.withLock { state in
                let before = state.items.count
                state.items.removeAll { $0.item.origin == .added && (blob == nil || $0.item.publicBlob == blob) }
                return state.items.count != before
            }
        }
    }

    @Test func keysWithoutALifetimeAreKeptAndThoseWithOneHeld() throws {
        let vault = MemoryVault()
        var session = SSHAgentSession(keyring: SSHKeyring(), vault: vault) { _ in true }
        let (kept, keptKey) = KeyringTests.ed25519(comment: "kept", constraints: [.confirm])
        let (brief, _) = KeyringTests.ed25519(comment: "brief", constraints: [.lifetime(seconds: 60)])
        guard case .success = session.reply(to: .addIdentity(kept)), case .success = session.reply(to: .addIdentity(brief)) else {
            Issue.record("an add failed"); return
        }
        #expect(vault.keys().map(\.comment) == ["kept"])
        #expect(vault.keys().first?.confirm == true)
        #expect(session.keyring.keys().map(\.comment) == ["brief"])
        guard case .identities(let listed) = session.reply(to: .requestIdentities) else { Issue.record("no identities"); return }
        #expect(Set(listed.map(\.comment)) == ["kept", "brief"])

        // A kept key signs through the vault, after the host's decision.
        guard case .signature(let signature) = session.reply(to: .sign(keyBlob: KeyringTests.blob(keptKey), data: [1, 2, 3], flags: 0)) else {
            Issue.record("the kept key did not sign"); return
        }
        let publicKey = try SSHPublicKey(blob: KeyringTests.blob(keptKey))
        #expect(publicKey.isValidSignature(signature, for: [1, 2, 3]))
        #expect(vault.state.withLock { $0.signed } == ["kept"])

        guard case .success = session.reply(to: .removeAllIdentities) else { Issue.record("-D failed"); return }
        #expect(vault.keys().isEmpty && session.keyring.keys().isEmpty)
    }

    @Test func aRefusedUseNeverReachesTheVault() {
        let vault = MemoryVault()
        var session = SSHAgentSession(keyring: SSHKeyring(), vault: vault) { _ in false }
        let (kept, key) = KeyringTests.ed25519(comment: "kept")
        _ = session.reply(to: .addIdentity(kept))
        guard case .failure = session.reply(to: .sign(keyBlob: KeyringTests.blob(key), data: [1], flags: 0)) else {
            Issue.record("signed without leave"); return
        }
        #expect(vault.state.withLock { $0.signed }.isEmpty)
    }

    @Test func theItemEncodingRoundTripsEveryKeyType() throws {
        let (added, _) = KeyringTests.ed25519(comment: "round")
        let p256 = P256.Signing.PrivateKey()
        let ecdsa = PrivateKeyFields.ecdsa(curve: "nistp256", publicPoint: Array(p256.publicKey.x963Representation),
                                           scalar: SecretBytes(Array(p256.rawRepresentation)))
        for (type, fields) in [("ssh-ed25519", added.key), ("ecdsa-sha2-nistp256", ecdsa)] {
            let encoded = fields.encoded(keyType: type)
            let decoded = try PrivateKeyFields.decoded(encoded)
            #expect(decoded.keyType == type)
            #expect(try SSHSigningKey(decoded.fields).publicBlob == SSHSigningKey(fields).publicBlob)
            #expect(throws: SSHAgentError.self) { try PrivateKeyFields.decoded(encoded + [0]) }
        }
        let item = SSHKeyItem(publicBlob: try SSHSigningKey(ecdsa).publicBlob, comment: "", confirm: true, origin: .made, namespaces: ["git", "file"])
        #expect(item.allows(namespace: "git") && !item.allows(namespace: "other") && !item.allows(namespace: nil))
        #expect(SSHKeyItem(attributes: item.attributes) == item)
        var forged = item.attributes
        forged["acct"] = .string("SHA256:another")
        #expect(SSHKeyItem(attributes: forged) == nil)
    }

    @Test(arguments: [(SSHKeyGenerator.KeyType.ed25519, nil), (.ecdsa, 256), (.ecdsa, 384), (.ecdsa, 521), (.rsa, 2048)] as [(SSHKeyGenerator.KeyType, Int?)])
    func newKeysSignAsTheirPublicHalfVerifies(type: SSHKeyGenerator.KeyType, bits: Int?) throws {
        let made = try SSHKeyGenerator.generate(type, bits: bits)
        let key = try SSHSigningKey(PrivateKeyFields.decoded(made.fields.encoded(keyType: made.keyType)).fields)
        let signature = try key.signature(for: [4, 5, 6], flags: AgentRequest.rsaSHA512)
        #expect(try SSHPublicKey(blob: key.publicBlob).isValidSignature(signature, for: [4, 5, 6]))
        #expect(throws: SSHAgentError.self) { try SSHKeyGenerator.generate(type, bits: 1000) }
    }
}
