#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import KeychainModel
import KeyhavenAgentClient

/// The connection to keyhavend that carries this agent's clients: keyhavend holds the keys and
/// serves each client's socket, handed to it here (``SSHHandover``). keyhavend is started when
/// none runs, as `keyhaven` starts it.
struct Handover: Sendable {
    let fd: Int32

    /// Asks keyhavend to serve this agent's clients with a keyring of its own and, with
    /// `keychain`, the SSH keys kept in the default keychain.
    static func register(defaultLifetime: UInt32?, keychain: Bool, approvalMinutes: UInt32) throws(StoreError) -> Handover {
        let home = try KeychainHome.current()
        let client = try AgentLauncher.connect(home: home)
        let path = keychain ? try KeychainPreferences.load(home).defaultPath(home) : nil
        _ = try client.send(.serveSSHAgent(defaultLifetime: defaultLifetime, keychain: path, approvalMinutes: approvalMinutes))
        return Handover(fd: client.detach())
    }

    /// Hands a client's socket over; false when keyhavend is gone.
    func pass(_ client: Int32) -> Bool {
        kh_send_descriptor(fd, SSHHandover.connection.rawValue, client) == 0
    }

    /// Asks keyhavend to forget this agent's keys (SIGUSR1).
    func removeAllKeys() -> Bool {
        kh_send_descriptor(fd, SSHHandover.removeAllKeys.rawValue, -1) == 0
    }

    func close() { _ = System.close(fd) }
}
