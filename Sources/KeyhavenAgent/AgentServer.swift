#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import Dispatch
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgentClient
import Synchronization

/// The agent's listening side: one per socket, enforced by an exclusive lock on a file beside it.
///
/// A thread accepts connections and starts a thread for each (``AgentConnection``), at most
/// ``AgentFraming/maximumConnections`` at once; a client beyond that is closed at once.
package final class AgentServer: Sendable {
    package let socket: AgentSocket
    private let lockFD: Int32
    private let listener: Int32
    private let connections = OpenConnections(limit: AgentFraming.maximumConnections)
    private let stop: StopRequest
    private let stopping = Atomic<Bool>(false)
    /// Signalled when the accept loop has returned.
    private let acceptLoopDone = DispatchSemaphore(value: 0)

    /// Takes the socket (replacing a stale one) and starts listening.
    /// `.duplicateKeychain`-free: another running agent is `.notAvailable` with a message.
    package init(socket: AgentSocket, service: AgentService) throws(StoreError) {
        self.socket = socket
        try socket.preparePrivateFolder()
        lockFD = open(socket.lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw StoreError(.notAvailable, "cannot open \(socket.lockPath)") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw StoreError(.notAvailable, "another keyhavend is already running for \(socket.path)", reason: .agentRunning)
        }
        // We hold the lock, so a socket file left here belongs to an agent that is gone.
        unlink(socket.path)
        stop = StopRequest()
        do throws(StoreError) {
            listener = try Self.listen(at: socket)
        } catch {
            close(lockFD)
            throw error
        }
        // Serving starts once every property is set: the accept loop uses them.
        let (wakefulness, turns, stop) = (Wakefulness(), LookUpTurns(), stop)
        do throws(StoreError) {
            try AgentThread.start { [self] in
                acceptLoop { fd in
                    AgentConnection(fd: fd, service: service, wakefulness: wakefulness, turns: turns, onShutdown: { stop.request() })
                }
                acceptLoopDone.signal()
            }
        } catch {
            close(listener)
            unlink(socket.path)
            close(lockFD)
            throw error
        }
    }

    /// A listening socket at `socket`'s path, 0600. It is bound under a private name and renamed
    /// into place once it listens: a client that sees the file can connect (binding in place
    /// leaves a moment between bind and listen when connects are refused).
    private static func listen(at socket: AgentSocket) throws(StoreError) -> Int32 {
        let staging = socket.folder + "/.agent-\(getpid()).sock"
        let address = try AgentSocket.address(staging)
        _ = try AgentSocket.address(socket.path)  // the name it is renamed to must fit too
        let fd = System.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StoreError(.notAvailable, "cannot make a socket: \(String(cString: strerror(errno)))") }
        unlink(staging)
        let previousMask = umask(0o177)  // the socket file is created 0600
        let bound = AgentSocket.withAddress(address) { bind(fd, $0, $1) }
        umask(previousMask)
        guard bound == 0, System.listen(fd, 64) == 0, rename(staging, socket.path) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            unlink(staging)
            throw StoreError(.notAvailable, "cannot listen at \(socket.path): \(reason)")
        }
        return fd
    }

    /// Accepts connections until the server stops, each served on a thread of its own.
    private func acceptLoop(_ connection: (Int32) -> AgentConnection) {
        while !stopping.load(ordering: .acquiring) {
            let fd = kh_accept_cloexec(listener)
            guard fd >= 0 else {
                let reason = errno
                if stopping.load(ordering: .acquiring) { return }
                // Out of descriptors or memory for a moment: wait rather than spin.
                if reason != EINTR && reason != ECONNABORTED { usleep(10_000) }
                continue
            }
            guard connections.admit(fd) else { continue }
            let served = connection(fd)
            let connections = self.connections
            do throws(StoreError) {
                try AgentThread.start {
                    served.serve()
                    connections.release(fd)
                }
            } catch {
                connections.release(fd)
            }
        }
    }

    /// Serves until SIGTERM, SIGINT or a `shutdown` request; then removes the socket, ends every
    /// connection and waits (at most ten seconds) for requests being answered to finish. The keys
    /// it held go with the process.
    package func run() {
        stop.wait()
        stopping.store(true, ordering: .releasing)
        unlink(socket.path)
        shutdown(listener, Int32(SHUT_RDWR))
        acceptLoopDone.wait()
        close(listener)
        connections.shutDownAll()
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while connections.open > 0 && MonotonicClock.nanoseconds() < deadline { usleep(5_000) }
        close(lockFD)
    }
}
