#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import KeychainModel
import Synchronization

/// How a client waits for the agent's answer: polling the socket for a short while before it
/// sleeps in `recv`, when answers to that kind of request have been coming that soon; for kinds
/// whose answers take longer but come regularly, sleeping until shortly before the usual time and
/// polling from there.
///
/// A thread that sleeps must be woken, and on a virtual machine whose idle CPUs halt, waking one
/// costs tens of microseconds on both sides (docs/benchmarks.md, "Through the agent": a bare
/// Unix-socket round trip between two processes on this project's machine takes 14 us on one CPU
/// and 73 us across two). A look-up answered in 100 us is then paid about half again. So the
/// client polls (yielding the CPU between polls) by ``PollBudget``'s rule: up to twice the recent
/// answer time of that request kind, at most ``longest``. A kind whose answers take more than
/// twice ``longest`` on average (writes wait for the disk; a busy agent queues) is not polled for
/// from the start: the client sleeps, woken early by an early answer, until shortly before the
/// usual answer time, then polls for at most ``longest``, when ``AnswerTimes`` finds the recent
/// answers regular; otherwise (answers that vary, as under load) it sleeps until the answer
/// comes, so a loaded machine loses nothing to polling. The recent times are kept per request
/// tag, per process. The agent does the same for the client's next request (`Wakefulness` in
/// KeyhavenAgent).
package enum AnswerWait {
    /// The longest a client polls before it sleeps, in nanoseconds: 300 us, or
    /// `KEYHAVEN_AGENT_POLL_US` microseconds (0 never polls), read once.
    package static let longest: UInt64 = environmentVariable("KEYHAVEN_AGENT_POLL_US").flatMap { UInt64($0) }.map { $0 * 1000 } ?? 300_000
    /// Recent answer times, per request tag: their average, and the last few.
    private static let recent = Mutex(Array(repeating: (PollBudget(longest: longest), AnswerTimes()), count: 32))

    /// How long to poll for an answer to a request with `tag`, in nanoseconds (0: not at once);
    /// half of ``longest`` before any answer of that kind.
    package static func budget(tag: UInt8) -> UInt64 {
        recent.withLock { $0[Int(tag) & 31].0 }.budget(unknown: longest / 2)
    }

    /// For a request with `tag` that is not polled for at once (a zero ``budget(tag:)``), how long
    /// after sending to sleep before polling for up to ``longest``, in nanoseconds; 0: no polling
    /// (``AnswerTimes``).
    package static func nap(tag: UInt8) -> UInt64 {
        recent.withLock { $0[Int(tag) & 31].1 }.nap(window: longest)
    }

    /// Records that an answer to a request with `tag` came `nanoseconds` after it was sent.
    package static func record(tag: UInt8, nanoseconds: UInt64) {
        recent.withLock {
            $0[Int(tag) & 31].0.record(nanoseconds)
            $0[Int(tag) & 31].1.record(nanoseconds)
        }
    }

    /// Waits, as the rule above says, until the answer to a request with `tag` sent at `sent`
    /// (``MonotonicClock``) may be read from `fd` without sleeping, or until polling for it is no
    /// longer worth it. Nothing is read: the caller then reads (sleeping in `recv` if need be).
    package static func wait(_ fd: Int32, tag: UInt8, since sent: UInt64) {
        let budget = budget(tag: tag)
        if budget > 0 {
            _ = poll(fd, budget: budget, since: sent)
            return
        }
        let nap = nap(tag: tag)
        guard nap > 0 else { return }
        let elapsed = MonotonicClock.nanoseconds() &- sent
        // An answer that comes during the nap ends it (and an error is the read's to report).
        if elapsed < nap, kh_wait_readable(fd, Int64(nap - elapsed)) != 0 { return }
        _ = poll(fd, budget: longest, since: MonotonicClock.nanoseconds())
    }

    /// Polls `fd` for something to read for up to `budget` nanoseconds after `start`; whether it
    /// became readable (the caller then reads, or sleeps in `recv` as before).
    static func poll(_ fd: Int32, budget: UInt64, since start: UInt64) -> Bool {
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        return PollBudget.poll(&descriptors, budget: budget, since: start)
    }
}
