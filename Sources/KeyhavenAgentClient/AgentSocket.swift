#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// Where the agent listens: `$KEYHAVEN_AGENT_SOCKET`, else `$XDG_RUNTIME_DIR/keyhaven/agent.sock`,
/// else `/tmp/keyhaven-<uid>/agent.sock`. The folder is 0700, the socket 0600.
package struct AgentSocket: Sendable, Hashable {
    package let path: String

    package init(path: String) { self.path = path }

    package static func current() -> AgentSocket {
        func variable(_ name: String) -> String? { environmentVariable(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let explicit = variable("KEYHAVEN_AGENT_SOCKET") { return AgentSocket(path: explicit) }
        if let runtime = variable("XDG_RUNTIME_DIR") { return AgentSocket(path: runtime + "/keyhaven/agent.sock") }
        return AgentSocket(path: "/tmp/keyhaven-\(getuid())/agent.sock")
    }

    package var folder: String { parentFolder(of: path) }
    /// The file whose lock says an agent owns this socket.
    package var lockPath: String { path + ".lock" }
}
