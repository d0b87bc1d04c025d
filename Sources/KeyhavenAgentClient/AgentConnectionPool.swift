#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import Synchronization

/// Idle connections to the agent, kept for the next request of this process: a request then
/// costs one round trip instead of a connect and a round trip.
///
/// A connection is lent to one caller at a time, so threads never share one. One found closed
/// (the agent restarted) is dropped before use; one that fails during a request is dropped, not
/// retried (the request may have been carried out). A child process after `fork` never uses its
/// parent's connections.
package final class AgentConnectionPool: Sendable {
    package static let shared = AgentConnectionPool()

    private struct Key: Hashable {
        let socket: String
        let home: String?
    }

    private struct Idle {
        var process: pid_t = getpid()
        var connections: [Key: [Int32]] = [:]
    }

    /// At most this many idle connections per agent and home; more are closed after use.
    private let limit = 8
    private let idle = Mutex(Idle())

    package init() {}

    /// Sends `request` on an idle connection, else a new one; an agent error is thrown as it is.
    @discardableResult
    package func send(_ request: AgentRequest, socket: AgentSocket, home: String?) throws(StoreError) -> AgentAnswer {
        let key = Key(socket: socket.path, home: home)
        let client: AgentClient
        if let reused = take(key) { client = AgentClient(adopting: reused, home: home) } else {
            client = try AgentClient(socket: socket, home: home)
        }
        let response = try client.exchange(request)
        give(client.detach(), key)
        return try response.get()
    }

    /// Keeps a connection made elsewhere (the command's first, which may have started the agent)
    /// for the next request.
    package func keep(_ client: AgentClient, socket: AgentSocket, home: String?) {
        give(client.detach(), Key(socket: socket.path, home: home))
    }

    /// Whether an idle connection to `socket` for `home` is kept and still open: the agent that
    /// answered on it is still running (a restarted agent is another process on a new socket
    /// file, and this connection would show it hung up).
    package func hasOpenIdleConnection(socket: AgentSocket, home: String?) -> Bool {
        idle.withLock { idle in
            guard idle.process == getpid(), let fd = idle.connections[Key(socket: socket.path, home: home)]?.last else { return false }
            return AgentClient.isIdleAndOpen(fd)
        }
    }

    /// The idle connections kept for `socket` and `home`.
    package func idleCount(socket: AgentSocket, home: String?) -> Int {
        idle.withLock { idle in idle.process == getpid() ? idle.connections[Key(socket: socket.path, home: home)]?.count ?? 0 : 0 }
    }

    /// Drops every idle connection (they close).
    package func removeAll() {
        let all = idle.withLock { idle in
            defer { idle.connections = [:] }
            return idle.process == getpid() ? idle.connections.values.flatMap { $0 } : []
        }
        all.forEach { close($0) }
    }

    private func take(_ key: Key) -> Int32? {
        while let fd = idle.withLock({ idle -> Int32? in
            // After fork the descriptors are the parent's connections too: leave them alone.
            if idle.process != getpid() { idle = Idle() }
            return idle.connections[key]?.popLast()
        }) {
            if AgentClient.isIdleAndOpen(fd) { return fd }
            close(fd)
        }
        return nil
    }

    private func give(_ fd: Int32, _ key: Key) {
        let kept = idle.withLock { idle in
            guard idle.process == getpid(), idle.connections[key, default: []].count < limit else { return false }
            idle.connections[key, default: []].append(fd)
            return true
        }
        if !kept { close(fd) }
    }
}
