#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// A blocking client of the agent over its Unix socket: one request, one response, in order.
///
/// Plain POSIX sockets keep the command's start-up light (no event loop). Not thread-safe: use
/// one per thread.
package final class AgentClient {
    private var fd: Int32
    /// The keychain home every request names (the agent refuses requests for another home).
    private let home: String?

    /// Connects; `.notAvailable` when no agent listens there, or when what listens there is not
    /// this user's: the socket's folder must be this user's own (``AgentSocket/verifyFolder()``)
    /// and the process at the other end must run as this user (`SO_PEERCRED`), both checked
    /// before a byte is sent.
    package init(socket: AgentSocket, home: String? = nil) throws(StoreError) {
        self.home = home
        try socket.verifyFolder()
        // Close-on-exec: a program this process runs does not inherit the connection (the agent
        // would take requests on it as tampered, docs/access.md).
        fd = System.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StoreError(.notAvailable, "cannot make a socket: \(String(cString: strerror(errno)))") }
        let address: sockaddr_un
        do throws(StoreError) { address = try AgentSocket.address(socket.path) } catch {
            close(fd)
            throw error
        }
        let connected = AgentSocket.withAddress(address) { connect(fd, $0, $1) }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StoreError(.notAvailable, "no agent at \(socket.path) (\(reason))")
        }
        guard let peer = PeerCredentials(socket: fd), peer.uid == getuid() else {
            let owner = PeerCredentials(socket: fd).map { "uid \($0.uid)" } ?? "an unknown user"
            close(fd)
            throw StoreError(.notAvailable, "refusing the agent socket \(socket.path): it is served by \(owner), not by this user")
        }
    }

    /// The agent's process id, from the socket's peer credentials (the kernel's word, not the
    /// agent's: it holds for an agent of any protocol version).
    package var agentProcessID: Int32? { PeerCredentials(socket: fd)?.pid }

    /// Takes over a connection that ``detach()`` gave up.
    package init(adopting fd: Int32, home: String?) {
        self.fd = fd
        self.home = home
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Gives up the connection without closing it: the descriptor is the caller's now.
    package func detach() -> Int32 {
        defer { fd = -1 }
        return fd
    }

    /// Sends a request and waits for its answer; an agent error is thrown as it is.
    @discardableResult
    package func send(_ request: AgentRequest) throws(StoreError) -> AgentAnswer {
        try exchange(request).get()
    }

    /// Sends a request and returns its response, error or not. A throw means the connection is
    /// unusable (broken, closed, or out of step); an error response leaves it usable.
    package func exchange(_ request: AgentRequest) throws(StoreError) -> AgentResponse {
        // Both frames may hold secrets (passwords, item data): wiped once used.
        var frame = AgentFraming.encode(request, home: home)
        defer { zeroize(&frame) }
        let tag = request.tag
        let sent = MonotonicClock.nanoseconds()
        try write(frame)
        _ = AnswerWait.poll(fd, budget: AnswerWait.budget(tag: tag), since: sent)
        var payload = try readAnswer { AnswerWait.record(tag: tag, nanoseconds: MonotonicClock.nanoseconds() &- sent) }
        defer { zeroize(&payload) }
        return try AgentFraming.decode(AgentResponse.self, from: payload)
    }

    /// The body of the next frame (``FrameReader``): `arrived` runs when its first bytes do. The
    /// agent sends nothing unasked, so a byte after the frame is a broken connection (`.decode`),
    /// as is a length over ``AgentFraming/maximumFrame`` (thrown before the body is read).
    private func readAnswer(arrived: () -> Void) throws(StoreError) -> [UInt8] {
        var reader = FrameReader(fd: fd)
        var body: [UInt8]
        do throws(FrameReader.Failure) {
            body = try reader.next(maximum: AgentFraming.maximumFrame, arrived: arrived)
        } catch .oversized {
            throw StoreError(.decode, "the agent sent an oversized message")
        } catch {
            throw StoreError(.notAvailable, "the agent closed the connection")
        }
        guard !reader.hasPending else {
            zeroize(&body)
            reader.discardPending()
            throw StoreError(.decode, "the agent sent bytes after its answer")
        }
        return body
    }

    /// Whether an idle connection can carry another request: nothing to read (the agent sends
    /// only answers, so readable means it closed) and no hang-up.
    package static func isIdleAndOpen(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    private func write(_ bytes: [UInt8]) throws(StoreError) {
        if let reason = SocketIO.send(fd, bytes) { throw StoreError(.notAvailable, "the agent connection broke: \(reason)") }
    }

}
