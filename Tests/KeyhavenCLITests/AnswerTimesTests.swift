import Foundation
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// A client waiting for an answer slower than it polls for sleeps until shortly before the usual
/// answer time and polls from there, when recent answers are regular (docs/benchmarks.md, "The
/// client naps before a write's answer"). The times here are long so that the bounds hold on a
/// loaded machine.
@Suite(.freshKeychain()) struct AnswerTimesTests {
    @Test("A nap ends at the third fastest recent answer, and only when at least half of the recent answers came within the window polled from there")
    func napRule() {
        var times = AnswerTimes()
        for index in 0..<(AnswerTimes.needed - 1) { times.record(690_000 + UInt64(index % 3) * 10_000) }
        #expect(times.nap(window: 300_000) == 0, "too few answers")
        for index in 0..<AnswerTimes.kept { times.record(690_000 + UInt64(index % 3) * 10_000) }
        // 690, 700 and 710 us: the nap ends at 690 us, and every answer is in the window to 990 us.
        #expect(times.nap(window: 300_000) == 690_000)
        #expect(times.nap(window: 0) == 0, "no window, no nap")
        // Answers spread over 1 to 16 ms (a busy agent): no nap.
        for index in 0..<AnswerTimes.kept { times.record(UInt64(index + 1) * 1_000_000) }
        #expect(times.nap(window: 300_000) == 0)
        // Only the last answers count: regular ones again bring the nap back.
        for _ in 0..<AnswerTimes.kept { times.record(2_000_000) }
        #expect(times.nap(window: 300_000) == 2_000_000)
        // Two answers faster than the rest do not move the nap; exactly half of the answers in the
        // window is enough, one fewer is not.
        func record(regular: Int) {
            for index in 0..<AnswerTimes.kept {
                times.record(index < AnswerTimes.napRank ? 100_000 : index < AnswerTimes.napRank + regular ? 2_000_000 : 20_000_000 + UInt64(index) * 1_000_000)
            }
        }
        record(regular: AnswerTimes.kept / 2)
        #expect(times.nap(window: 300_000) == 2_000_000)
        record(regular: AnswerTimes.kept / 2 - 1)
        #expect(times.nap(window: 300_000) == 0)
    }

    /// A connected pair of Unix stream sockets, closed by the caller.
    func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }

    /// How long `body` took.
    func timed(_ body: () -> Void) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        body()
        return clock.now - start
    }

    @Test("A client sleeps through the nap unless the answer comes first, then polls for at most the longest poll; with answers that vary it does not wait at all")
    func napThenPoll() throws {
        // Tags no request has, so that other tests' answers do not move them.
        let (regular, early, varying): (UInt8, UInt8, UInt8) = (28, 29, 30)
        guard AnswerWait.longest > 0 else {  // KEYHAVEN_AGENT_POLL_US=0: never polls, never naps
            for _ in 0..<20 { AnswerWait.record(tag: regular, nanoseconds: 50_000_000) }
            #expect(AnswerWait.nap(tag: regular) == 0)
            return
        }
        let (a, b) = try socketPair()
        defer { close(a); close(b) }
        // Answers take 50 ms: no poll at once, a nap of 50 ms.
        for _ in 0..<20 { AnswerWait.record(tag: regular, nanoseconds: 50_000_000) }
        #expect(AnswerWait.budget(tag: regular) == 0)
        #expect(AnswerWait.nap(tag: regular) == 50_000_000)
        let napped = timed { AnswerWait.wait(a, tag: regular, since: MonotonicClock.nanoseconds()) }
        #expect(napped >= .milliseconds(45))
        #expect(napped < .seconds(5))
        // Answers take 2 s, but this one is there already: the nap ends at once.
        for _ in 0..<20 { AnswerWait.record(tag: early, nanoseconds: 2_000_000_000) }
        var byte: UInt8 = 1
        _ = write(b, &byte, 1)
        let woken = timed { AnswerWait.wait(a, tag: early, since: MonotonicClock.nanoseconds()) }
        #expect(woken < .seconds(1))
        // Answers spread over 10 to 200 ms: no nap, no poll; the caller sleeps in recv.
        for index in 0..<20 { AnswerWait.record(tag: varying, nanoseconds: UInt64(index + 1) * 10_000_000) }
        #expect(AnswerWait.nap(tag: varying) == 0)
        _ = read(a, &byte, 1)
        let slept = timed { AnswerWait.wait(a, tag: varying, since: MonotonicClock.nanoseconds()) }
        #expect(slept < .seconds(1))
    }
}
