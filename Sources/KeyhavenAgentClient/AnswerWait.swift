#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import Synchronization

/// How a client waits for the agent's answer: polling the socket for a short while before it
/// sleeps in `recv`, when answers to that kind of request have been coming that soon.
///
/// A thread that sleeps must be woken, and on a virtual machine whose idle CPUs halt, waking one
/// costs tens of microseconds on both sides (docs/benchmarks.md, "Through the agent": a bare
/// Unix-socket round trip between two processes on this project's machine takes 14 us on one CPU
/// and 73 us across two). A look-up answered in 100 us is then paid about half again. So the
/// client polls (yielding the CPU between polls) by ``PollBudget``'s rule: up to twice the recent
/// answer time of that request kind, at most ``longest``; a kind whose answers take more than
/// twice ``longest`` on average (writes wait for the disk; a busy agent queues) is not polled for
/// at all, so a loaded machine loses nothing to polling. The recent times are kept per request
/// tag, per process. The agent does the same for the client's next request (`Wakefulness` in
/// KeyhavenAgent).
package enum AnswerWait {
    /// The longest a client polls before it sleeps, in nanoseconds: 300 us, or
    /// `KEYHAVEN_AGENT_POLL_US` microseconds (0 never polls), read once.
    package static let longest: UInt64 = environmentVariable("KEYHAVEN_AGENT_POLL_US").flatMap { UInt64($0) }.map { $0 * 1000 } ?? 300_000
    /// Recent answer times, per request tag.
    private static let recent = Mutex([PollBudget](repeating: PollBudget(longest: longest), count: 32))

    /// How long to poll for an answer to a request with `tag`, in nanoseconds (0: sleep at once);
    /// half of ``longest`` before any answer of that kind.
    package static func budget(tag: UInt8) -> UInt64 {
        recent.withLock { $0[Int(tag) & 31] }.budget(unknown: longest / 2)
    }

    /// Records that an answer to a request with `tag` came `nanoseconds` after it was sent.
    package static func record(tag: UInt8, nanoseconds: UInt64) {
        recent.withLock { $0[Int(tag) & 31].record(nanoseconds) }
    }

    /// Polls `fd` for something to read for up to `budget` nanoseconds after `start`; whether it
    /// became readable (the caller then reads, or sleeps in `recv` as before).
    package static func poll(_ fd: Int32, budget: UInt64, since start: UInt64) -> Bool {
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        return PollBudget.poll(&descriptors, budget: budget, since: start)
    }
}
