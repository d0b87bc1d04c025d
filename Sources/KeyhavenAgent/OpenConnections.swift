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
    private let limit: Int
    private let sockets = Mutex<Set<Int32>>([])

    init(limit: Int) { self.limit = limit }

    /// Takes `fd` in; false (and `fd` closed) when the limit is reached.
    func admit(_ fd: Int32) -> Bool {
        let admitted = sockets.withLock { sockets in
            guard sockets.count < limit else { return false }
            sockets.insert(fd)
            return true
        }
        if !admitted { close(fd) }
        return admitted
    }

    /// Closes `fd`, a socket ``admit(_:)`` took.
    func release(_ fd: Int32) {
        sockets.withLock {
            $0.remove(fd)
            close(fd)
        }
    }

    /// Ends every connection (the agent is stopping): a thread waiting in `recv` or `send` on one
    /// returns, and its connection closes.
    func shutDownAll() {
        sockets.withLock { $0.forEach { shutdown($0, Int32(SHUT_RDWR)) } }
    }

    /// How many are open.
    var open: Int { sockets.withLock { $0.count } }
}
