#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import KeyhavenAgentClient
import NIOCore

/// Keeps the agent's event loop awake for a short while after it answers a quick request on the
/// loop itself (a look-up, an echo, a hello), when the client's next request usually comes that
/// soon: the loop polls its clients' sockets instead of sleeping in `epoll_wait`, so the next
/// request is read without a wake-up.
///
/// On a virtual machine whose idle CPUs halt, a thread asleep on another CPU takes tens of
/// microseconds to wake, and the waker pays for it too (docs/benchmarks.md, "Through the agent").
/// A program making calls one after another would pay that on every call. So after an answer the
/// loop polls every connection it serves for up to ``longest`` when that connection's recent gaps
/// (from an answer to the next request, ``PollBudget``) average within twice it; as soon as any is
/// readable it stops, and SwiftNIO's `epoll_wait` returns at once. A connection whose requests
/// come further apart gets no polling, so an idle agent uses no CPU. The loop does not poll while
/// a request is on a thread pool (its answer comes back as an event-loop task, which polling would
/// delay), and a scheduled task (the auto-lock) waits at most ``longest``.
///
/// One per event loop; used only on that loop (``AgentServer`` keeps it in a `NIOLoopBoundBox`).
package final class Wakefulness {
    /// The longest the loop polls after an answer, in nanoseconds: 200 us, or
    /// `KEYHAVEN_AGENT_SPIN_US` microseconds (0 never polls), read once.
    package static let longest: UInt64 = environmentVariable("KEYHAVEN_AGENT_SPIN_US").flatMap { UInt64($0) }.map { $0 * 1000 } ?? 200_000

    private let eventLoop: any EventLoop
    /// The sockets of the connections served, to poll.
    private var descriptors: [pollfd] = []
    /// Requests now on a thread pool (a request or a prompt).
    private var away = 0
    /// A poll is already queued on the loop.
    private var queued = false

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Polls `fd` too, until ``forget(_:)``.
    package func watch(_ fd: Int32) {
        descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
    }

    /// Stops polling `fd` (its connection closed; the number may be reused by another file).
    package func forget(_ fd: Int32) {
        if let index = descriptors.firstIndex(where: { $0.fd == fd }) { descriptors.remove(at: index) }
    }

    /// A request went to a thread pool: no polling until it is back.
    package func leave() { away += 1 }

    /// A request came back from a thread pool.
    package func comeBack() { away -= 1 }

    /// After an answer: polls for up to `budget` nanoseconds once the loop has handled what it
    /// has now (a task queued on the loop, so the answer's write and any other ready work go first).
    package func stayAwake(for budget: UInt64) {
        guard budget > 0, !queued, away == 0, !descriptors.isEmpty else { return }
        queued = true
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute {
            let wakefulness = loopBound.value
            wakefulness.queued = false
            guard wakefulness.away == 0 else { return }
            _ = PollBudget.poll(&wakefulness.descriptors, budget: budget, since: MonotonicClock.nanoseconds())
        }
    }
}
