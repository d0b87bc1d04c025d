#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// How soon something usually comes (a moving average), and how long that makes it worth polling
/// for it instead of sleeping: the client waiting for an answer (``AnswerWait``) and the agent's
/// connection threads waiting for a client's next request use the same rule.
///
/// Polling is worth it when the wait is short: up to twice the recent average, at most `longest`;
/// a wait that usually lasts longer than twice `longest` is not polled for at all, so a slow or
/// idle peer costs no CPU. The band between `longest` and twice it keeps polling on: a waiter that
/// sleeps measures its waits with its own wake-up added (tens of microseconds on a virtual
/// machine whose idle CPUs halt), and a rule that stopped at `longest` could stop polling on a
/// noisy moment and then never measure a short wait again.
package struct PollBudget: Sendable {
    /// The longest poll, in nanoseconds (0: never polls).
    package let longest: UInt64
    /// The moving average in nanoseconds (0: nothing recorded yet).
    package private(set) var average: UInt64 = 0

    package init(longest: UInt64) {
        self.longest = longest
    }

    /// Records that the awaited thing came `nanoseconds` after the wait began (an average over
    /// about the last eight). A wait counts as at most four times ``longest``: one long pause (the
    /// program busy elsewhere, the thread preempted) then moves the average past ``longest`` only
    /// when the waits were near it already, and a few long ones in a row do.
    package mutating func record(_ nanoseconds: UInt64) {
        let wait = min(nanoseconds, longest &* 4)
        average = average == 0 ? wait : average - average / 8 + wait / 8
    }

    /// How long to poll, in nanoseconds: twice the average, at most ``longest``, nothing when the
    /// average is beyond twice ``longest``; `unknown` (at most ``longest``) when nothing is
    /// recorded yet.
    package func budget(unknown: UInt64) -> UInt64 {
        guard longest > 0 else { return 0 }
        if average == 0 { return min(unknown, longest) }
        return average * 2 <= longest ? average * 2 : (average <= longest * 2 ? longest : 0)
    }

    /// ``longest`` when the average is within twice it, else 0 (and 0 before anything is
    /// recorded): for a waiter whose polling costs only its own idle time (a connection's thread
    /// in the agent), which then also covers a wait somewhat longer than usual instead of sleeping
    /// through it.
    package func whole() -> UInt64 {
        average != 0 && average <= longest * 2 ? longest : 0
    }

    /// Polls `descriptors` for something to read, giving the CPU to any other runnable thread
    /// between polls, until one is readable (true) or `budget` nanoseconds after `start` (false).
    /// Nothing is read: the caller reads, or sleeps as it would have.
    package static func poll(_ descriptors: inout [pollfd], budget: UInt64, since start: UInt64) -> Bool {
        guard budget > 0, !descriptors.isEmpty else { return false }
        while true {
            if System.poll(&descriptors, nfds_t(descriptors.count), 0) > 0 { return true }
            if MonotonicClock.nanoseconds() &- start >= budget { return false }
            sched_yield()
        }
    }
}
