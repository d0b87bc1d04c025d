#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import KeychainModel
import KeyhavenAgentClient

/// Turns for look-ups of one item: at most as many run at once as the machine has CPUs, and the
/// rest sleep until a turn is free.
///
/// Each client has a thread of its own in the agent. With many clients reading at once, that many
/// threads would contend for one keychain's lock: a thread holding it is preempted with others
/// spinning and queueing behind it, and the clients together get fewer look-ups done than with
/// turns for as many as the CPUs (docs/benchmarks.md, "Through the agent"). A look-up of one item is short and bound by CPU; anything that may wait for the
/// disk, the user or a key derivation (a write, an unlock, a prompt, a search for many items)
/// takes no turn, so it never holds up look-ups.
package final class LookUpTurns: Sendable {
    /// How many look-ups run at once.
    package let count: Int
    private let free: DispatchSemaphore

    /// As many turns as `KEYHAVEN_AGENT_LOOKUP_TURNS` says (read once), else as the CPUs.
    package static let configured = environmentVariable("KEYHAVEN_AGENT_LOOKUP_TURNS").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// `count` turns.
    package init(count: Int = configured) {
        self.count = count
        free = DispatchSemaphore(value: count)
    }

    /// Whether `request` takes a turn: a look-up of at most one item.
    package static func needed(for request: AgentRequest) -> Bool {
        guard case .find(_, let query, _, _, _) = request else { return false }
        return query.limit == 1
    }

    /// `body`, in a turn (waiting for one while all are taken).
    package func inTurn<T>(_ body: () -> T) -> T {
        free.wait()
        defer { free.signal() }
        return body()
    }
}
