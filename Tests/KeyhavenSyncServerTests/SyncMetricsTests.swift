import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Testing

/// `--metrics`: the Prometheus endpoint's counters move with the requests the server answers.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncMetricsTests {
    @Test("Requests by route and status, their durations, pushes, conflicts, notifications, open polls and the pool")
    func countersMove() async throws {
        try await SyncServerTests.withServer(arguments: ["--metrics", "127.0.0.1:0"]) { server, _ in
            let client = try SyncClient(server: server.url), test = TestAccount()
            let start = try await MetricsScrape.scrape(server)
            #expect(start["keyhaven_sync_pushes_total"] == 0 && start["keyhaven_sync_database_connections_max"] == 20)
            for _ in 0..<3 { #expect(await client.isHealthy()) }
            _ = try await SyncServerTests.raw("GET", server.url + "/v1/nothing")
            let head = try await client.createAccount(test.genesis)
            let pushed = try await client.push(LogBatch(head: head, entries: [test.record("one", after: head, counter: 2, by: test.creator)]))
            // A push at the old head: a conflict.
            _ = try? await client.push(LogBatch(head: head, entries: [test.record("late", after: head, counter: 3, by: test.creator)]))
            try await withTaskExecutorPreference(DedicatedExecutor.shared) {
                async let waiting = client.pull(test.account, after: pushed.sequence, wait: 20, as: test.creator)
                let polling = try await MetricsScrape.await(server) { $0["keyhaven_sync_open_polls"] == 1 }
                #expect(polling["keyhaven_sync_open_polls"] == 1)
                _ = try await client.push(LogBatch(head: pushed, entries: [test.record("two", after: pushed, counter: 4, by: test.creator)]))
                #expect(try await waiting.entries.count == 1)
            }
            let end = try await MetricsScrape.await(server) { $0["keyhaven_sync_open_polls"] == 0 }
            let health = #"route="/v1/health""#, ok = #"status="200""#
            #expect(end.sum("keyhaven_sync_http_requests_total", health, ok) - start.sum("keyhaven_sync_http_requests_total", health, ok) == 3)
            #expect(end.sum("keyhaven_sync_http_requests_total", #"route="/v1/accounts/{account}/entries""#, #"status="409""#) == 1)
            #expect(end.sum("keyhaven_sync_http_requests_total", #"route="/v1/accounts""#, #"status="201""#) == 1)
            #expect(end.sum("keyhaven_sync_http_request_duration_seconds_count", #"route="/v1/accounts/{account}/entries""#, #"method="GET""#) == 1)
            #expect(end.sum("keyhaven_sync_http_requests_total", #"status="404""#) == 1)
            #expect(end["keyhaven_sync_pushes_total"] == 2 && end["keyhaven_sync_pushed_entries_total"] == 2)
            #expect(end["keyhaven_sync_conflicts_total"] == 1)
            #expect(end["keyhaven_sync_notifications_sent_total"] == 2 && end["keyhaven_sync_notifications_received_total"] >= 2)
            #expect(end["keyhaven_sync_open_polls"] == 0 && end["keyhaven_sync_database_connections_in_use"] == 0)
            #expect(end["keyhaven_sync_database_errors_total"] == 0 && end["keyhaven_sync_listener_up"] == 1)
            // No account id, device id or key in what the endpoint shows.
            let text = end.samples.keys.joined(separator: "\n")
            #expect(!text.contains(test.account.hex) && !text.contains(test.creator.id.hex))
        }
    }

    @Test("A bad --metrics address is refused at once, with a message")
    func metricsOption() throws {
        let refused = try TestSyncServer.runToExit(["--database-url", "postgres://kc@127.0.0.1:1/keyhaven", "--metrics", "nowhere"])
        #expect(refused.status != 0 && refused.output.contains("--metrics is HOST:PORT"), "\(refused.output)")
    }
}
