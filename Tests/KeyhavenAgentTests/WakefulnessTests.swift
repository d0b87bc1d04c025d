import Foundation
import KeyhavenAgent
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// A connection's thread in the agent polls its socket for a short while after an answer instead
/// of sleeping (docs/benchmarks.md, "Through the agent"): the poll ends as soon as the client has
/// sent something, and no more threads poll at once than the limit. The budgets here are long so
/// that the bounds hold on a loaded machine.
@Suite(.freshKeychain()) struct WakefulnessTests {
    /// A connected pair of Unix stream sockets, closed by the caller.
    func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }

    /// How long `body` took, and what it returned.
    func timed<T>(_ body: () -> T) -> (T, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let value = body()
        return (value, clock.now - start)
    }

    @Test("With nothing to read a thread polls for its whole budget, and a request that arrives ends the poll at once")
    func pollEndsOnRequest() throws {
        let (a, b) = try socketPair()
        defer { close(a); close(b) }
        let wakefulness = Wakefulness(limit: 1)
        // Nothing arrives: the poll lasts its budget and finds nothing.
        let (found, held) = timed { wakefulness.stayAwake(on: a, for: 300_000_000) }
        #expect(!found)
        #expect(held >= .milliseconds(280))
        // A byte arrives 50 ms in, well before a 10 s budget ends.
        let writer = Thread {
            usleep(50_000)
            var byte: UInt8 = 1
            _ = write(b, &byte, 1)
        }
        writer.start()
        let (arrived, ended) = timed { wakefulness.stayAwake(on: a, for: 10_000_000_000) }
        #expect(arrived)
        #expect(ended >= .milliseconds(45))
        #expect(ended < .seconds(5))
    }

    @Test("No poll with no budget, nor while as many threads as the limit poll; a place is free again once a poll ends")
    func noPoll() throws {
        let (a, b) = try socketPair()
        let (c, d) = try socketPair()
        defer { close(a); close(b); close(c); close(d) }
        let wakefulness = Wakefulness(limit: 1)
        let (none, unbudgeted) = timed { wakefulness.stayAwake(on: a, for: 0) }
        #expect(!none)
        #expect(unbudgeted < .seconds(1))
        // One thread polls `a` for up to 20 s; meanwhile another may not poll at all.
        let polling = Thread { _ = wakefulness.stayAwake(on: a, for: 20_000_000_000) }
        polling.start()
        usleep(100_000)
        let (found, waited) = timed { wakefulness.stayAwake(on: c, for: 10_000_000_000) }
        #expect(!found)
        #expect(waited < .seconds(5))
        // The first poll ends when `a` is readable; then the place is free.
        var byte: UInt8 = 1
        _ = write(b, &byte, 1)
        usleep(100_000)
        let (_, heldAgain) = timed { wakefulness.stayAwake(on: c, for: 300_000_000) }
        #expect(heldAgain >= .milliseconds(280))
    }

    @Test("The budget follows how soon things come: twice the recent wait, all of the longest up to twice it, none beyond; one long pause counts as four times the longest")
    func budgetRule() {
        var gaps = PollBudget(longest: 200_000)
        #expect(gaps.budget(unknown: 0) == 0)
        #expect(gaps.budget(unknown: 100_000) == 100_000)
        #expect(gaps.whole() == 0)
        for _ in 0..<40 { gaps.record(30_000) }
        #expect((55_000...65_000).contains(gaps.budget(unknown: 0)))
        #expect(gaps.whole() == 200_000)
        // One pause of a second among quick requests: still polled for (it counts as 800 us).
        gaps.record(1_000_000_000)
        #expect(gaps.whole() == 200_000)
        for _ in 0..<40 { gaps.record(150_000) }
        #expect(gaps.budget(unknown: 0) == 200_000)
        // Between the longest and twice it (a sleeping waiter's waits, its wake-up added): still polled.
        for _ in 0..<60 { gaps.record(350_000) }
        #expect(gaps.budget(unknown: 0) == 200_000)
        #expect(gaps.whole() == 200_000)
        for _ in 0..<60 { gaps.record(500_000) }
        #expect(gaps.budget(unknown: 0) == 0)
        #expect(gaps.whole() == 0)
        for _ in 0..<40 { gaps.record(5_000_000) }
        #expect(gaps.budget(unknown: 0) == 0)
        #expect(gaps.whole() == 0)
        #expect(PollBudget(longest: 0).budget(unknown: 100_000) == 0)
    }
}
