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
/// client polls (yielding the CPU between polls) for up to twice the recent answer time of that
/// request kind, at most ``longest``; a kind whose answers take longer (writes wait for the disk;
/// a busy agent queues) is not polled for at all, so a loaded machine loses nothing to polling.
/// The recent time is a moving average per request tag, kept per process.
package enum AnswerWait {
    /// The longest a client polls before it sleeps, in nanoseconds: 300 us, or
    /// `KEYHAVEN_AGENT_POLL_US` microseconds (0 never polls), read once.
    package static let longest: UInt64 = environmentVariable("KEYHAVEN_AGENT_POLL_US").flatMap { UInt64($0) }.map { $0 * 1000 } ?? 300_000
    /// Moving averages of answer times in nanoseconds, per request tag (0: none yet).
    private static let recent = Mutex([UInt64](repeating: 0, count: 32))

    /// How long to poll for an answer to a request with `tag`, in nanoseconds (0: sleep at once).
    package static func budget(tag: UInt8) -> UInt64 {
        guard longest > 0 else { return 0 }
        let average = recent.withLock { $0[Int(tag) & 31] }
        if average == 0 { return longest / 2 }
        return average * 2 <= longest ? average * 2 : (average <= longest ? longest : 0)
    }

    /// Records that an answer to a request with `tag` came `nanoseconds` after it was sent.
    package static func record(tag: UInt8, nanoseconds: UInt64) {
        recent.withLock { recent in
            // An average over about the last eight answers.
            let average = recent[Int(tag) & 31]
            recent[Int(tag) & 31] = average == 0 ? nanoseconds : average - average / 8 + nanoseconds / 8
        }
    }

    /// Polls `fd` for something to read for up to `budget` nanoseconds after `start`; whether it
    /// became readable (the caller then reads, or sleeps in `recv` as before).
    package static func poll(_ fd: Int32, budget: UInt64, since start: UInt64) -> Bool {
        guard budget > 0 else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            if Glibc.poll(&entry, 1, 0) != 0 { return true }
            if MonotonicClock.nanoseconds() &- start >= budget { return false }
            sched_yield()
        }
    }
}
