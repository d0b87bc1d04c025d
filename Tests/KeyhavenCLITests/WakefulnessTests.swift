import Foundation
import KeyhavenAgent
import KeyhavenAgentClient
import KeychainTestSupport
import NIOCore
import NIOPosix
import Testing

/// The agent's event loop polls its clients' sockets for a short while after an answer instead of
/// sleeping (docs/benchmarks.md, "Through the agent"): the poll ends as soon as a client has sent
/// something, never runs while a request is on a pool, and finds the sockets SwiftNIO does not
/// name. The budgets here are long so that the bounds hold on a loaded machine.
@Suite(.freshKeychain()) struct WakefulnessTests {
    /// A connected pair of Unix stream sockets, closed by the caller.
    func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }

    /// Runs `setUp` on a fresh event loop, then measures how long until a task queued after it runs.
    func delay(_ setUp: @escaping @Sendable (NIOLoopBoundBox<Wakefulness>) -> Void, whileWaiting: () -> Void = {}) throws -> Duration {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let box = try loop.submit { NIOLoopBoundBox(Wakefulness(eventLoop: loop), eventLoop: loop) }.wait()
        let clock = ContinuousClock()
        let start = clock.now
        let after = loop.makePromise(of: ContinuousClock.Instant.self)
        // Queued by the set-up, so after any poll the set-up queued.
        loop.execute {
            setUp(box)
            loop.execute { after.succeed(clock.now) }
        }
        whileWaiting()
        return try after.futureResult.wait() - start
    }

    @Test("A socket of this process is found by its cookie; an unknown cookie, or a file that is no socket, finds nothing")
    func descriptorByCookie() throws {
        let (a, b) = try socketPair()
        defer { close(a); close(b) }
        let cookie = try #require(SocketDescriptor.cookie(of: b))
        #expect(SocketDescriptor.find(cookie: cookie) == b)
        #expect(SocketDescriptor.cookie(of: a) != cookie)
        #expect(SocketDescriptor.find(cookie: cookie &+ 1_000_000_007) == nil)
        let file = open("/proc/self/status", O_RDONLY)
        defer { close(file) }
        #expect(SocketDescriptor.cookie(of: file) == nil)
    }

    @Test("The cookie SwiftNIO reads off a channel's socket (as the agent's handler does) finds that channel's descriptor")
    func channelCookie() throws {
        let (a, b) = try socketPair()
        defer { close(b) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let channel = try ClientBootstrap(group: group).withConnectedSocket(a).wait()  // closes a
        defer { try? channel.close().wait() }
        let provider = try #require(channel as? any SocketOptionProvider)
        let cookie: UInt64 = try provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET),
                                                                name: SocketOptionName(SocketDescriptor.cookieOption)).wait()
        #expect(SocketDescriptor.find(cookie: cookie) == a)
    }

    @Test("With nothing to read the loop polls for its whole budget, and a request that arrives ends the poll at once")
    func pollEndsOnRequest() throws {
        let (a, b) = try socketPair()
        defer { close(a); close(b) }
        // Nothing arrives: the next task waits out the budget (it would not if nothing were polled).
        let held = try delay { box in
            box.value.watch(a)
            box.value.stayAwake(for: 300_000_000)
        }
        #expect(held >= .milliseconds(280))
        // A byte arrives 50 ms in, well before a 10 s budget ends.
        let ended = try delay({ box in
            box.value.watch(a)
            box.value.stayAwake(for: 10_000_000_000)
        }, whileWaiting: {
            usleep(50_000)
            var byte: UInt8 = 1
            _ = write(b, &byte, 1)
        })
        #expect(ended >= .milliseconds(45))
        #expect(ended < .seconds(5))
    }

    @Test("No poll while a request is on a pool, with no socket to poll, or once a connection's socket is forgotten")
    func noPoll() throws {
        let (a, b) = try socketPair()
        defer { close(a); close(b) }
        let away = try delay { box in
            box.value.watch(a)
            box.value.leave()
            box.value.stayAwake(for: 10_000_000_000)
        }
        #expect(away < .seconds(5))
        let none = try delay { box in box.value.stayAwake(for: 10_000_000_000) }
        #expect(none < .seconds(5))
        let forgotten = try delay { box in
            box.value.watch(a)
            box.value.forget(a)
            box.value.stayAwake(for: 10_000_000_000)
        }
        #expect(forgotten < .seconds(5))
        // Back from the pool: polling again (the budget is held).
        let back = try delay { box in
            box.value.watch(a)
            box.value.leave()
            box.value.comeBack()
            box.value.stayAwake(for: 300_000_000)
        }
        #expect(back >= .milliseconds(280))
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
