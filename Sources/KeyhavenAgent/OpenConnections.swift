#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The clients' sockets the agent has open, at most ``AgentFraming/maximumConnections``: a
/// client beyond the limit is closed at once, so no number of connections can take the agent's
/// memory or threads. A socket is closed only here, under the lock, so ``shutDownAll()`` never
/// touches a descriptor number the system has given to another file since.
final class OpenConnections: Sendable {
    private let count: BoundedCount
    private let sockets = Mutex<Set<Int32>>([])

    init(limit: Int) { count = BoundedCount(limit: limit) }

    /// Takes `fd` in; false (and `fd` closed) when the limit is reached.
    func admit(_ fd: Int32) -> Bool {
        guard count.enter() else {
            close(fd)
            return false
        }
        sockets.withLock { _ = $0.insert(fd) }
        return true
    }

    /// Closes `fd`, a socket ``admit(_:)`` took.
    func release(_ fd: Int32) {
        sockets.withLock {
            $0.remove(fd)
            close(fd)
        }
        count.leave()
    }

    /// Ends every connection (the agent is stopping): a thread waiting in `recv` or `send` on one
    /// returns, and its connection closes.
    func shutDownAll() {
        sockets.withLock { $0.forEach { shutdown($0, Int32(SHUT_RDWR)) } }
    }

    /// How many are open.
    var open: Int { count.count }
}
