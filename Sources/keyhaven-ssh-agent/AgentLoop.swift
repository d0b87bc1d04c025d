#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import KeychainModel
import KeyhavenAgentClient

/// The write end of the pipe the signal handler writes each signal's number to.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The running agent: it accepts clients on its socket and hands each to keyhavend at once;
/// SIGUSR1 forgets the keys, SIGTERM, SIGINT and SIGHUP stop it (the socket is removed). When
/// keyhavend stops, the keys it held for this agent are gone, and the agent connects again (a
/// new, empty keyring, as after OpenSSH's agent restarts).
struct AgentLoop {
    let listener: AgentListener
    var handover: Handover
    let options: AgentOptions
    /// The process whose exit ends the agent (the `command` form), checked every ten seconds.
    let parent: Int32?

    func log(_ line: String) {
        guard options.debug else { return }
        let bytes = Array("keyhaven-ssh-agent: \(line)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    mutating func run() -> Never {
        let signals = Self.catchSignals()
        while true {
            var fds = [pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: handover.fd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, nfds_t(fds.count), parent == nil ? -1 : 10_000)
            if ready < 0 && errno != EINTR { stop(status: 1, "poll: \(String(cString: strerror(errno)))") }
            if let parent, kill(parent, 0) != 0 && errno == ESRCH { stop(status: 0, "the command ended") }
            if fds[1].revents != 0 {
                var number: UInt8 = 0
                if read(signals, &number, 1) == 1 {
                    if Int32(number) == SIGUSR1 {
                        log("SIGUSR1: removing all keys")
                        if !handover.removeAllKeys() { reconnect() }
                    } else {
                        stop(status: 0, "signal \(number)")
                    }
                }
            }
            // keyhavend sends nothing on this connection: readable means it closed it.
            if fds[2].revents != 0 { reconnect() }
            if fds[0].revents != 0 { accept() }
        }
    }

    private mutating func accept() {
        let client = kh_accept_cloexec(listener.fd)
        guard client >= 0 else { return }
        defer { close(client) }
        if options.debug, let peer = PeerCredentials(socket: client) { log("client pid \(peer.pid), uid \(peer.uid)") }
        if !handover.pass(client) {
            reconnect()
            _ = handover.pass(client)
        }
    }

    /// Connects to keyhavend again, trying for a while before giving up.
    private mutating func reconnect() {
        handover.close()
        log("keyhavend closed the connection; connecting again (the keys it held are gone)")
        for attempt in 0..<50 {
            if let renewed = try? Handover.register(defaultLifetime: options.defaultLifetime, keychain: options.keychain,
                                                      approvalMinutes: options.approvalMinutes) {
                handover = renewed
                return
            }
            usleep(UInt32(min(attempt + 1, 10)) * 100_000)
        }
        stop(status: 1, "keyhavend cannot be reached")
    }

    private func stop(status: Int32, _ reason: String) -> Never {
        log("stopping: \(reason)")
        listener.remove()
        exit(status)
    }

    /// A pipe the handler of SIGTERM, SIGINT, SIGHUP and SIGUSR1 writes to; SIGPIPE is ignored.
    /// The four are unblocked: a parent's blocked mask (which exec keeps) must not leave the agent
    /// deaf to `-k` and SIGUSR1.
    private static func catchSignals() -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return -1 }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        signalPipeWriteEnd = ends[1]
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGTERM, SIGINT, SIGHUP, SIGUSR1] {
            signal(number) { caught in
                var byte = UInt8(truncatingIfNeeded: caught)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
        }
        var handled = sigset_t()
        sigemptyset(&handled)
        for number in [SIGTERM, SIGINT, SIGHUP, SIGUSR1] { sigaddset(&handled, number) }
        sigprocmask(SIG_UNBLOCK, &handled, nil)
        return ends[0]
    }
}
