#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient

/// One client connection, served on a thread of its own: checks the peer is this user, then
/// reads one request, answers it, and reads the next, in order.
///
/// A request is answered on the thread that read it: the client's request wakes this thread and
/// its answer wakes the client, the two wake-ups of a bare socket round trip, with no hand-off to
/// another thread in between (docs/benchmarks.md, "Through the agent"). A slow request, a prompt
/// waiting for the user, or a client that stops reading holds this thread only, never another
/// client's; look-ups of one item take turns (``LookUpTurns``). One request is read at a time
/// (backpressure): of a client that sends without reading the answers, the agent holds one
/// request and one answer, and the rest stays in the sockets' buffers. A malformed frame ends
/// this connection.
///
/// The peer process and its executable are pinned at accept (``ClientProcess``). A request that needs the user's
/// answer (``AgentService/Outcome/question(_:_:)``) asks here and then runs again with the answer
/// (it changed nothing the first time).
final class AgentConnection: Sendable {
    private let fd: Int32
    private let service: AgentService
    private let wakefulness: Wakefulness
    private let turns: LookUpTurns
    private let onShutdown: @Sendable () -> Void

    init(fd: Int32, service: AgentService, wakefulness: Wakefulness, turns: LookUpTurns, onShutdown: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.service = service
        self.wakefulness = wakefulness
        self.turns = turns
        self.onShutdown = onShutdown
    }

    /// What follows an answer.
    private enum Then {
        case next
        /// The connection ends once the answer is written (a client of another protocol version).
        case close
        /// The agent stops once the answer is written (a `shutdown` request).
        case stop
        /// The connection carries SSH agent hand-overs from now on (``SSHAgentHost``).
        case sshHandovers(defaultLifetime: UInt32?, keychain: String?, approvalMinutes: UInt32)
    }

    /// Serves the connection until the client closes it, sends something malformed, or asks the
    /// agent to stop. The caller closes the socket.
    func serve() {
        guard let client = verifiedClient() else { return }
        // A Secret Service this client asked for lasts as long as its connection.
        defer { service.secretService.connectionClosed(ObjectIdentifier(client)) }
        // How soon requests have been following answers (when the last answer was written; 0: none).
        var gaps = PollBudget(longest: Wakefulness.longest)
        var answeredAt: UInt64 = 0
        // A request is usually read in one recv, its length and body together (``FrameReader``).
        var reader = FrameReader(fd: fd)
        defer { reader.discardPending() }
        while true {
            if answeredAt != 0 && !reader.hasPending { _ = wakefulness.stayAwake(on: fd, for: gaps.whole()) }
            // An oversized length ends the connection before more of it is read than the first
            // read took; memory is taken as the bytes come, not for the length announced.
            guard var payload = try? reader.next(maximum: AgentFraming.maximumRequest, step: 64 << 10, arrived: {
                if answeredAt != 0 { gaps.record(MonotonicClock.nanoseconds() &- answeredAt) }
            }) else { return }
            let answered = respond(to: payload, client: client)
            zeroize(&payload)
            guard case (var bytes, let then)? = answered else { return }
            let broken = SocketIO.send(fd, bytes) != nil
            zeroize(&bytes)
            answeredAt = MonotonicClock.nanoseconds()
            switch then {
            case .next: if broken { return }
            case .close: return
            case .stop:
                onShutdown()
                return
            case .sshHandovers(let defaultLifetime, let keychain, let approvalMinutes):
                if !broken {
                    SSHAgentHost(service: service, approvalMinutes: Int(approvalMinutes))
                        .serveHandovers(on: fd, defaultLifetime: defaultLifetime, keychain: keychain)
                }
                return
            }
        }
    }

    /// The peer, when it runs as this user (only the agent's own user may talk to it; its folder
    /// is 0700 too), pinned by the socket's own pidfd of it (Linux 6.5+: no window for a recycled
    /// pid), else one opened on its pid at once, with the executable it runs at accept; suspect
    /// when another program may write on the connection (``ConnectionHolders``).
    private func verifiedClient() -> ClientProcess? {
        guard let credentials = PeerCredentials(socket: fd), credentials.uid == getuid() else { return nil }
        let pidfd = kh_peer_pidfd(fd)
        let client = ClientProcess(pid: credentials.pid, pidfd: pidfd >= 0 ? pidfd : ClientProcess.openPidfd(credentials.pid))
        if ConnectionHolders.suspicion(socket: fd, client: client) != nil { client.markSuspect() }
        return client
    }

    /// The answer to one frame, or nil to close the connection without one (a malformed frame).
    private func respond(to payload: [UInt8], client: ClientProcess) -> ([UInt8], Then)? {
        let request: AgentRequest
        let home: String?
        do throws(StoreError) {
            (request, home) = try AgentFraming.decodeWithHome(AgentRequest.self, from: payload)
        } catch {
            // A client of another protocol version is told so (it can read the version byte);
            // anything else malformed just ends the connection.
            guard error.code == .wrongVersion else { return nil }
            return (AgentFraming.encode(AgentResponse.failure(StoreError(.wrongVersion,
                "keyhavend speaks agent protocol \(AgentFraming.version): stop it (keyhaven agent stop) and run the command again"))), .close)
        }
        // The floor of the path: no keychain touched.
        if case .echo(let data) = request {
            let response: AgentResponse = data.count <= AgentFraming.maximumEcho ? .answer(.bytes(data))
                : .failure(StoreError(.invalidParameter, "an echo of more than \(AgentFraming.maximumEcho) bytes"))
            return (AgentFraming.encode(response), .next)
        }
        // The SSH agent's hand-overs are this connection's from now on: the request is answered
        // here, since it is about the connection, not about a keychain.
        if case .serveSSHAgent(let defaultLifetime, let keychain, let approvalMinutes) = request {
            if let keychain {
                // The keychain must be one the agent serves; it is opened (and made, for the
                // default one) now, so that a wrong path fails the request, not every signature.
                do throws(StoreError) { _ = try service.database(keychain) } catch {
                    return (AgentFraming.encode(AgentResponse.failure(error)), .next)
                }
            }
            return (AgentFraming.encode(AgentResponse.answer(.done)), .sshHandovers(defaultLifetime: defaultLifetime, keychain: keychain,
                                                                           approvalMinutes: approvalMinutes))
        }
        let response = response(to: request, home: home, client: client)
        let answer = AgentFraming.encode(response)
        if case .shutdown = request, response.error == nil { return (answer, .stop) }
        return (answer, .next)
    }

    /// Runs the request (a look-up of one item in a turn, ``LookUpTurns``); asks the user when it
    /// needs to (at most four times, in no turn), then runs it again. Who the client is is read
    /// before the turn: the first reading hashes its executable from the disk.
    private func response(to request: AgentRequest, home: String?, client: ClientProcess) -> AgentResponse {
        client.beginRequest()
        let needsTurn = LookUpTurns.needed(for: request)
        var round = 0
        while true {
            let context = service.context(for: client)
            let run = { self.service.respond(to: request, forHome: home, context: context) }
            switch needsTurn ? turns.inTurn(run) : run() {
            case .response(let response):
                return response
            case .question(let question, let context, let unasked):
                guard round < 4, context.client != nil, context.identity != nil else {
                    return .failure(StoreError(.interactionNotAllowed, "too many prompts for one request"))
                }
                do {
                    try service.answer(question, context: context)
                } catch {
                    var failure = error as? StoreError ?? StoreError(.userCanceled, "the prompt failed")
                    // No way to ask: the check's own answer (a group not granted: errSecMissingEntitlement).
                    if failure.code == .interactionNotAllowed { failure = StoreError(unasked.code, unasked.message + "; " + failure.message, reason: unasked.reason) }
                    return .failure(failure)
                }
            }
            round += 1
        }
    }
}
