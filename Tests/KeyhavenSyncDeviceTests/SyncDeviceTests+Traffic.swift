import AsyncHTTPClient
import Foundation
import KeychainModel
import KeychainStore
import KeychainTestSupport
import KeyhavenSyncDevice
import Testing

/// What a change costs on the wire, read from the server's own counters.
extension SyncDeviceTests {
    @Test("A long poll's entries are the next round's pull: a change crosses the wire to the other device once")
    func pollFeedsTheRound() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url, arguments: ["--metrics", "127.0.0.1:0"])
        defer { server.stop() }
        let devices = try ["writer", "reader"].map(TestDevice.init)
        let (a, b) = (devices[0], devices[1])
        try SyncDevices.pair(a, [b], server: server)
        // The reader's engine in this process, as its agent runs it: a round, then a long poll.
        let home = KeychainHome(path: b.home)
        let engine = SyncEngine(database: try KeychainRegistry().database(at: home.defaultKeychainPath, home: home, create: false), home: home)
        _ = try await engine.syncNow()
        try SyncDevices.syncNow(a)  // the writer has what the reader's rounds pushed
        let before = try await Self.counters(server)
        async let heard = engine.waitForRemoteChange(seconds: 20)
        try await Task.sleep(for: .milliseconds(500))
        try a.set("live", String(repeating: "x", count: 1024))
        try SyncDevices.syncNow(a)
        #expect(try await heard)
        let report = try await engine.syncNow()
        #expect(report.pulled >= 1 && report.added == 1)
        #expect(try b.items()["live"]?.count == 1024)
        let after = try await Self.counters(server)
        let pushed = after.pushed - before.pushed, pulled = after.pulled - before.pulled, bytes = after.bytes - before.bytes
        #expect(pushed >= 1 && pulled == pushed, "\(pushed) entries pushed, \(pulled) pulled: each crosses to the reader once")
        print("pollFeedsTheRound: \(pushed) entries pushed, \(pulled) pulled, \(bytes) bytes of entries pulled")
    }

    /// The server's pushed and pulled entries and pulled bytes, from its Prometheus endpoint.
    static func counters(_ server: TestSyncServer) async throws -> (pushed: Int, pulled: Int, bytes: Int) {
        var port = server.metricsPort
        for _ in 0..<100 where port == nil {
            try await Task.sleep(for: .milliseconds(50))
            port = server.metricsPort
        }
        let url = "http://127.0.0.1:\(try #require(port))/metrics"
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 8 << 20))
        func value(_ name: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
        }
        return (value("keyhaven_sync_pushed_entries_total"), value("keyhaven_sync_pulled_entries_total"),
                value("keyhaven_sync_pulled_entry_bytes_total"))
    }
}
