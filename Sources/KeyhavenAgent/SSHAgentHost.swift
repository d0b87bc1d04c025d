#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgentClient
import KeyhavenSSHAgent

/// The SSH agent's side in keyhavend: `keyhaven-ssh-agent` owns the socket `ssh` and `ssh-add`
/// connect to and hands each connection over here, so keys live in this process (undumpable,
/// as every secret of the agent) and the client is the process at the other end of that very
/// socket, read from the kernel and checked as any client of the agent is (``ClientProcess``,
/// ``ConnectionHolders``), never a name the handing program gives.
///
/// Each hand-over connection has its own ``SSHKeyring``: two `keyhaven-ssh-agent`s hold two sets
/// of keys, as two OpenSSH agents do, and a keyring ends with its hand-over connection (its
/// clients' connections are shut then). An agent that keeps its keys in a keychain
/// (``SSHKeychainKeys``) also lists and signs with that keychain's SSH keys, which outlive it.
struct SSHAgentHost: Sendable {
    let service: AgentService
    /// How long a host or namespace approved at a prompt stays approved (0: never).
    let approvalMinutes: Int
    var prompter: AccessPrompter { service.prompter }
    var approvals: SSHApprovals { service.sshApprovals }

    /// The longest message a client may send (OpenSSH's agent takes 256 KiB).
    static let maximumMessage = 256 * 1024
    /// The most client connections one hand-over connection may have open at once.
    static let maximumConnections = 128

    /// Serves the hand-overs that arrive on `fd` until it closes.
    func serveHandovers(on fd: Int32, defaultLifetime: UInt32?, keychain: String?) {
        let keyring = SSHKeyring(defaultLifetime: defaultLifetime)
        let kept = keychain.map { SSHKeychainKeys(service: service, keychain: $0) }
        let connections = OpenConnections(limit: Self.maximumConnections)
        defer {
            connections.shutDownAll()
            keyring.removeAll()
        }
        while true {
            var byte: UInt8 = 0
            var passed: Int32 = -1
            guard kh_receive_descriptor(fd, &byte, &passed) == 1 else { return }
            switch SSHHandover(rawValue: byte) {
            case .connection where passed >= 0:
                let client = passed
                guard connections.admit(client) else { continue }
                do throws(StoreError) {
                    try AgentThread.start {
                        serveClient(client, keyring: keyring, kept: kept)
                        connections.release(client)
                    }
                } catch {
                    connections.release(client)
                }
            case .removeAllKeys:
                if passed >= 0 { close(passed) }
                keyring.removeAll()
            case .connection, nil:
                if passed >= 0 { close(passed) }
                return
            }
        }
    }

    /// One client: its messages in order, each answered before the next is read. A message
    /// longer than ``maximumMessage`` ends the connection; one that does not parse is answered
    /// with a failure, as OpenSSH's agent answers it.
    private func serveClient(_ fd: Int32, keyring: SSHKeyring, kept: SSHKeychainKeys?) {
        guard let credentials = PeerCredentials(socket: fd), credentials.uid == getuid() else { return }
        let pidfd = kh_peer_pidfd(fd)
        let client = ClientProcess(pid: credentials.pid, pidfd: pidfd >= 0 ? pidfd : ClientProcess.openPidfd(credentials.pid))
        if ConnectionHolders.suspicion(socket: fd, client: client) != nil { client.markSuspect() }
        let record = ConnectionRecord(pid: client.pid)
        var session = SSHAgentSession(keyring: keyring, vault: kept?.vault(for: client), signed: { use in
            approvals.recordUse(use, by: record.chain, target: SSHApprovals.target(of: use, hostNames: record.names(of: use)), allowed: record.how)
        }) { use in decide(use, client: client, record: record) }
        while true {
            guard let header = Self.read(fd, count: 4) else { return }
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, length <= Self.maximumMessage, var message = Self.read(fd, count: length) else { return }
            let reply: AgentReply
            if let request = try? KeyhavenSSHAgent.AgentRequest(message: message) {
                reply = session.reply(to: request)
            } else {
                reply = .failure
            }
            zeroize(&message)
            guard SocketIO.send(fd, reply.encoded) == nil else { return }
        }
    }

    /// Whether the client may have this signature: a key added to confirm each use asks the
    /// user, naming the program, its parents, the destination and what is signed, unless an
    /// approval the user gave covers the use; any other key is the user's programs' to use, as
    /// with OpenSSH's agent. `record` is told how it was allowed, for the use's record.
    private func decide(_ use: KeyUse, client: ClientProcess, record: ConnectionRecord) -> Bool {
        guard use.confirm else {
            record.how = "no prompt"
            return true
        }
        let mark = ProcessMark.of(client.pid)
        if let mark, client.isAlive, approvals.approval(for: use, process: mark, alive: ProcessMark.isRunning) != nil {
            record.how = "approval"
            return true
        }
        let description = SSHUseDescription(use: use, chain: record.chain, knownHosts: record.knownHosts).text
        let scope = mark.flatMap { SSHApprovals.scope(for: use, process: $0, chain: record.chain, hostNames: record.names(of: use),
                                                       minutes: approvalMinutes) }
        do throws(StoreError) {
            let approved = try prompter.confirm(description, client: client, identity: client.identity(),
                                                standing: scope.map { SSHApprovals.buttonLabel(for: $0, minutes: approvalMinutes) })
            if approved, let scope { approvals.grant(scope, for: use) }
            record.how = "prompt"
            return true
        } catch {
            prompter.log("a signature with the SSH key \(AccessPrompter.shown(use.comment)) was refused: \(error.message)")
            return false
        }
    }

    /// The approvals and last uses, after revoking what `revoke` names (`.itemNotFound` for an
    /// approval that is not there).
    static func report(_ approvals: SSHApprovals, revoking revoke: SSHRevocation?) throws(StoreError) -> SSHUseReport {
        switch revoke {
        case .approval(let id):
            guard approvals.revoke(id) else { throw StoreError(.itemNotFound, "no SSH approval \(id)") }
        case .all:
            _ = approvals.revokeAll()
        case nil:
            break
        }
        let current = approvals.current(alive: ProcessMark.isRunning).map { approval in
            SSHUseReport.Approval(id: approval.id, key: approval.key, comment: approval.comment, scope: Self.words(approval.scope),
                                  granted: approval.granted, expires: approval.expires)
        }
        let uses = approvals.lastUses().map {
            SSHUseReport.LastUse(key: $0.key, comment: $0.comment, at: $0.at, by: $0.by, target: $0.target, allowed: $0.allowed)
        }
        return SSHUseReport(approvals: current, lastUses: uses)
    }

    /// A scope in the report's words.
    static func words(_ scope: SSHApprovals.Scope) -> String {
        let forwarded = { (yes: Bool) in yes ? ", forwarded" : "" }
        switch scope {
        case .host(let fingerprint, let names, let isForwarded, _):
            return "logins to \(names.isEmpty ? "" : names.joined(separator: ", ") + " ")(\(fingerprint))\(forwarded(isForwarded))"
        case .namespace(let namespace, let isForwarded, _):
            return (namespace == "git" ? "git signing" : "signatures in the namespace \"\(namespace)\"") + forwarded(isForwarded)
        case .process(_, let chain):
            return "every use by \(chain) while it runs"
        }
    }

    /// Exactly `count` bytes, or nil at end of file or on an error.
    private static func read(_ fd: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + done, count - done, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                zeroize(&bytes)
                return nil
            }
            done += n
        }
        return bytes
    }
}

/// What a connection's prompts and its signatures' record say of it, read once and only when
/// first needed (a connection that only lists keys reads neither): the client's process chain
/// and the user's known_hosts. And how its last signature was allowed. Used on that
/// connection's thread only.
private final class ConnectionRecord {
    let pid: Int32
    var how = ""
    private(set) lazy var chain = ProcessChain(pid: pid).description
    private(set) lazy var knownHosts = KnownHosts.userFile()

    init(pid: Int32) { self.pid = pid }

    /// The names known_hosts gives the use's verified host.
    func names(of use: KeyUse) -> [String] {
        use.destination.map { knownHosts.names(for: $0.hostKey) } ?? []
    }
}
