import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Synchronization
import Testing

/// The server's life beside its database: several starting at once on an empty one, PostgreSQL
/// restarting under pushes, and SIGTERM with polls waiting or with PostgreSQL gone.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncServerLifecycleTests {
    @Test("Servers starting at once on an empty database migrate it once, and all serve")
    func migrateAtOnce() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let servers = try await withThrowingTaskGroup(of: TestSyncServer.self) { group in
            for _ in 0..<3 { group.addTask { try TestSyncServer(databaseURL: postgres.url) } }
            return try await group.reduce(into: [TestSyncServer]()) { $0.append($1) }
        }
        defer { for server in servers { server.stop() } }
        let test = TestAccount()
        let head = try await (try SyncClient(server: servers[0].url)).createAccount(test.genesis)
        for server in servers {
            #expect(try await (try SyncClient(server: server.url)).pull(test.account, after: 0, as: test.creator).head == head)
        }
        // One schema row, at this server's version.
        #expect(try postgres.sql("DO $$ BEGIN IF (SELECT count(*) FROM keyhaven_schema) <> 1 OR (SELECT max(version) FROM keyhaven_schema) <> 2 THEN RAISE 'schema rows'; END IF; END $$") == 0)
    }

    @Test("SIGTERM answers a waiting poll at once and ends the server within 5 seconds")
    func terminateWithPollWaiting() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url, arguments: ["--metrics", "127.0.0.1:0"])
        defer { server.stop(kill: true) }
        let client = try SyncClient(server: server.url), test = TestAccount()
        let head = try await client.createAccount(test.genesis)
        try await withTaskExecutorPreference(DedicatedExecutor.shared) {
            async let waiting = client.pull(test.account, after: head.sequence, wait: 30, as: test.creator)
            _ = try await MetricsScrape.await(server) { $0["keyhaven_sync_open_polls"] >= 1 }
            let start = ContinuousClock.now
            let ended = server.terminate(within: .seconds(10))
            let answer = try await waiting
            #expect(answer.head == head && answer.entries.isEmpty)
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(ended != nil && ended!.took < .seconds(5) && ended!.status == 0, "\(String(describing: ended))")
        }
    }

    @Test("SIGTERM with PostgreSQL stopped ends the server within 5 seconds")
    func terminateWithDatabaseDown() async throws {
        try await SyncServerTests.withServer(arguments: Self.impatient) { server, postgres in
            #expect(await (try SyncClient(server: server.url, timeout: .seconds(30))).isHealthy())
            try postgres.stopServer()
            // Down: the server answers 503, and keeps running.
            let refused = try await SyncServerTests.raw("GET", server.url + "/v1/health")
            #expect(refused.status == 503 && refused.code == "unavailable")
            let ended = server.terminate(within: .seconds(10))
            #expect(ended != nil && ended!.took < .seconds(5), "\(String(describing: ended)): \(server.output.suffix(2000))")
        }
    }

    /// A server that waits 2 seconds for PostgreSQL, not 10: a test's outage outlasts it quickly.
    static let impatient = ["--database-timeout", "2"]

    @Test("PostgreSQL restarted during pushes: 503 meanwhile, the server stays up, every acknowledged push is there, devices go on")
    func restartUnderPushes() async throws {
        try await SyncServerTests.withServer(arguments: Self.impatient) { server, postgres in try await Self.restart(server, postgres) }
    }

    static func restart(_ server: TestSyncServer, _ postgres: TestPostgres) async throws {
        let client = try SyncClient(server: server.url, timeout: .seconds(30))
        let test = TestAccount()
        let genesis = try await client.createAccount(test.genesis)
        let record = PushRecord()
        try await withTaskExecutorPreference(DedicatedExecutor.shared) {
            // A device pushing one record at a time, as fast as it can, pulling after a refusal
            // (a push may have landed though its answer was lost).
            let pusher = Task {
                var head = genesis, counter: UInt64 = 1
                while !record.stopped.withLock({ $0 }) {
                    counter += 1
                    let entry = test.record("push \(counter)", after: head, counter: counter, by: test.creator)
                    do throws(SyncClientError) {
                        head = try await client.push(LogBatch(head: head, entries: [entry]))
                        record.acknowledged.withLock { $0.append(head) }
                        record.statuses.withLock { $0[200, default: 0] += 1 }
                    } catch {
                        record.statuses.withLock { $0[error.status ?? 0, default: 0] += 1 }
                        try? await Task.sleep(for: .milliseconds(100))
                        if let pulled = try? await client.pull(test.account, after: head.sequence, as: test.creator), let last = pulled.entries.last {
                            head = last.head
                            counter = max(counter, last.deviceCounter)
                        }
                    }
                }
            }
            try await Task.sleep(for: .seconds(2))
            let before = record.acknowledged.withLock { $0.count }
            try postgres.stopServer(mode: "immediate")
            // Down longer than a request waits for it: a clear 503, not a hang.
            let health = try await SyncServerTests.raw("GET", server.url + "/v1/health")
            #expect(health.status == 503 && health.code == "unavailable", "\(health.status)")
            try postgres.startServer()
            try await Task.sleep(for: .seconds(1))
            // Devices go on by themselves: more pushes land after the restart.
            let resumed = ContinuousClock.now
            while record.acknowledged.withLock({ $0.count }) < before + 5, ContinuousClock.now - resumed < .seconds(90) {
                try await Task.sleep(for: .milliseconds(100))
            }
            record.stopped.withLock { $0 = true }
            await pusher.value
            #expect(record.acknowledged.withLock { $0.count } >= before + 5, "pushes did not resume: \(record.statuses.withLock { $0 })")
        }
        let seen = record.statuses.withLock { $0 }
        // The outage's 503 is the health probe's above: the pusher may spend the outage in a
        // request that outlives it (a loaded machine), so it need not meet one itself.
        #expect(Set(seen.keys).isSubset(of: [200, 503, 409]), "\(seen)")
        #expect(server.isRunning)
        // Every acknowledged head is in the log, entry for entry.
        var stored: [UInt64: LogHead] = [:]
        var after: UInt64 = 0
        while true {
            let page = try await client.pull(test.account, after: after, as: test.creator)
            for entry in page.entries { stored[entry.sequence] = entry.head }
            guard let last = page.entries.last, last.sequence < page.head.sequence else { break }
            after = last.sequence
        }
        for head in record.acknowledged.withLock({ $0 }) { #expect(stored[head.sequence] == head, "acknowledged push \(head.sequence) is missing") }
    }
}

/// What the pushing device saw: the heads the server acknowledged and the statuses it answered.
private final class PushRecord: Sendable {
    let acknowledged = Mutex<[LogHead]>([])
    let statuses = Mutex<[Int: Int]>([:])
    let stopped = Mutex(false)
}
