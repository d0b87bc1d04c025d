import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Testing

/// Two `keyhaven-sync-server` processes on one throw-away PostgreSQL: a push through either wakes
/// the polls waiting on both, through PostgreSQL's notifications, and keeps doing so when the
/// listening connection is killed.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct ChangeListenerTests {
    /// Two servers with metrics on one cluster, an account created through the first.
    static func withTwoServers(_ body: (TestSyncServer, TestSyncServer, TestPostgres, TestAccount, LogHead) async throws -> Void) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let first = try TestSyncServer(databaseURL: postgres.url, arguments: ["--metrics", "127.0.0.1:0"])
        defer { first.stop() }
        let second = try TestSyncServer(databaseURL: postgres.url, arguments: ["--metrics", "127.0.0.1:0"])
        defer { second.stop() }
        for server in [first, second] {
            let up = try await MetricsScrape.await(server) { $0["keyhaven_sync_listener_up"] == 1 }
            #expect(up["keyhaven_sync_listener_up"] == 1, "the server never listened")
        }
        let test = TestAccount()
        let head = try await (try SyncClient(server: first.url)).createAccount(test.genesis)
        // The clients on a thread of their own: other suites' waits hold the cooperative pool's threads.
        try await withTaskExecutorPreference(DedicatedExecutor.shared) {
            try await body(first, second, postgres, test, head)
        }
    }

    /// Pushes one record through `pusher` while the creator polls `poller`; the head, and the time
    /// from the push's answer to the poll's.
    static func pushWhilePolling(_ test: TestAccount, at head: LogHead, counter: UInt64, through pusher: TestSyncServer,
                                 polling poller: TestSyncServer) async throws -> (head: LogHead, answeredAfter: Duration, entries: Int) {
        let polling = try SyncClient(server: poller.url), pushing = try SyncClient(server: pusher.url)
        async let waiting = polling.pull(test.account, after: head.sequence, wait: 20, as: test.creator)
        let waits = try await MetricsScrape.await(poller) { $0["keyhaven_sync_open_polls"] >= 1 }
        #expect(waits["keyhaven_sync_open_polls"] >= 1, "the poll never waited")
        let pushed = try await pushing.push(LogBatch(head: head, entries: [test.record("change \(counter)", after: head, counter: counter, by: test.creator)]))
        let acknowledged = ContinuousClock.now
        let answer = try await waiting
        #expect(answer.head == pushed)
        return (pushed, ContinuousClock.now - acknowledged, answer.entries.count)
    }

    @Test("A change pushed through one server wakes a device polling the other within a second, and its own as fast; an idle renewal asks the database nothing")
    func acrossServers() async throws {
        try await Self.withTwoServers { first, second, _, test, start in
            var head = start, counter: UInt64 = 2
            for (pusher, poller) in [(first, second), (second, second), (second, first), (first, first)] {
                let round = try await Self.pushWhilePolling(test, at: head, counter: counter, through: pusher, polling: poller)
                #expect(round.entries == 1)
                #expect(round.answeredAfter < .seconds(1), "answered \(round.answeredAfter) after the push")
                (head, counter) = (round.head, counter + 1)
            }
            // The last round's notification reaches the second server on its own listening
            // connection, which may be after the first server's poll has answered.
            let notified = try await MetricsScrape.await(second) { $0["keyhaven_sync_notifications_received_total"] >= 4 }
            #expect(notified["keyhaven_sync_notifications_received_total"] >= 4)
            // Nothing new: the device renews its poll, and the server answers from what it keeps.
            let client = try SyncClient(server: second.url)
            _ = try await client.pull(test.account, after: head.sequence, wait: 1, as: test.creator)
            let before = try await MetricsScrape.scrape(second)
            for _ in 0..<3 { _ = try await client.pull(test.account, after: head.sequence, wait: 1, as: test.creator) }
            let after = try await MetricsScrape.scrape(second)
            #expect(after["keyhaven_sync_polls_without_query_total"] - before["keyhaven_sync_polls_without_query_total"] >= 3)
            #expect(after["keyhaven_sync_database_errors_total"] == 0)
        }
    }

    @Test("The listening connection killed: the server listens again, and a change after it still reaches a device waiting since before")
    func listenerKilled() async throws {
        try await Self.withTwoServers { first, second, postgres, test, start in
            let client = try SyncClient(server: second.url)
            async let waiting = client.pull(test.account, after: start.sequence, wait: 25, as: test.creator)
            _ = try await MetricsScrape.await(second) { $0["keyhaven_sync_open_polls"] >= 1 && $0["keyhaven_sync_listener_up"] == 1 }
            // Found by name, whatever query the listener ran last (its ping), and at least one killed.
            #expect(try postgres.sql("""
                DO $$ BEGIN
                  IF (SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                      WHERE application_name = 'keyhaven-sync-server listener') = 0 THEN
                    RAISE EXCEPTION 'no listening backend';
                  END IF;
                END $$
                """) == 0)
            let relistened = try await MetricsScrape.await(second) {
                $0["keyhaven_sync_listener_reconnects_total"] >= 1 && $0["keyhaven_sync_listener_up"] == 1
            }
            #expect(relistened["keyhaven_sync_listener_reconnects_total"] >= 1 && relistened["keyhaven_sync_listener_up"] == 1)
            let pushStart = ContinuousClock.now
            let pushed = try await (try SyncClient(server: first.url))
                .push(LogBatch(head: start, entries: [test.record("after the kill", after: start, counter: 2, by: test.creator)]))
            let answer = try await waiting
            #expect(answer.head == pushed && answer.entries.count == 1,
                    "answered \(answer.entries.count) entries at \(answer.head.sequence) after \(ContinuousClock.now - pushStart); pushed \(pushed.sequence)")
            #expect(ContinuousClock.now - pushStart < .seconds(5), "the poll waited \(ContinuousClock.now - pushStart)")
            // And the next change arrives by notification again.
            let next = try await Self.pushWhilePolling(test, at: pushed, counter: 3, through: first, polling: second)
            #expect(next.entries == 1 && next.answeredAfter < .seconds(1))
        }
    }
}
