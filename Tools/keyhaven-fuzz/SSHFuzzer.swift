import KeyhavenSSHAgent

/// The `ssh` target: bytes as what an SSH agent client sends (a message, answered by a session
/// over a keyring), and as the parts it carries that the agent reads further: session bindings,
/// host certificates, public keys, destination constraints, and a kept key's stored encoding.
enum SSHFuzzer {
    static func run(_ bytes: [UInt8]) {
        if let request = try? AgentRequest(message: bytes) {
            var session = SSHAgentSession(keyring: SSHKeyring()) { _ in true }
            _ = session.reply(to: request)
            if case .addIdentity = request { _ = session.reply(to: .requestIdentities) }
        }
        _ = try? SessionBinding.verified(from: bytes)
        _ = try? SSHCertificate(blob: bytes)
        _ = try? SSHPublicKey(blob: bytes)
        _ = try? DestinationConstraint.read(bytes)
        _ = try? PrivateKeyFields.decoded(bytes)
    }
}
