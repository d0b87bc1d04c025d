#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import KeyhavenAgentClient
import Synchronization

/// Keeps a connection's thread awake for a short while after it answers, when that client's next
/// request usually comes that soon: the thread polls its socket instead of sleeping in `recv`, so
/// the next request is read without a wake-up.
///
/// On a virtual machine whose idle CPUs halt, a thread asleep on another CPU takes tens of
/// microseconds to wake, and the waker pays for it too (docs/benchmarks.md, "Through the agent").
/// A program making calls one after another would pay that on every call. So after an answer the
/// thread polls its own socket for up to ``longest`` when that connection's recent gaps (from an
/// answer to the next request, ``PollBudget``) average within twice it, and reads as soon as
/// something comes; a connection whose requests come further apart gets no polling, so an idle
/// agent uses no CPU. At most `limit` threads (given at initialization) poll at once (one less
/// than the CPUs, at least one): under load many clients' threads would otherwise poll on the
/// CPUs the answers need.
package final class Wakefulness: Sendable {
    /// The longest a thread polls after an answer, in nanoseconds: 200 us, or
    /// `KEYHAVEN_AGENT_SPIN_US` microseconds (0 never polls), read once.
    package static let longest: UInt64 = environmentVariable("KEYHAVEN_AGENT_SPIN_US").flatMap { UInt64($0) }.map { $0 * 1000 } ?? 200_000

    /// The threads polling now, at most `limit`.
    private let polling: BoundedCount

    /// At most `limit` threads poll at once.
    package init(limit: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) - 1)) {
        polling = BoundedCount(limit: limit)
    }

    /// Polls `fd` for something to read for up to `budget` nanoseconds, when fewer than `limit`
    /// threads poll now; whether it became readable (false: the caller sleeps in `recv` as before).
    package func stayAwake(on fd: Int32, for budget: UInt64) -> Bool {
        guard budget > 0, polling.enter() else { return false }
        defer { polling.leave() }
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        return PollBudget.poll(&descriptors, budget: budget, since: MonotonicClock.nanoseconds())
    }
}
