import AsyncHTTPClient
import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import NIOSSL
import Testing

/// The deployment docs/sync.md shows, as written in deploy/: two servers on one PostgreSQL behind
/// nginx, and behind HAProxy, over TLS. Only the addresses and the certificate's paths change.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
                                 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/haproxy"),
                             "needs PostgreSQL, nginx and HAProxy (scripts/bootstrap installs them)"))
struct LoadBalancerTests {
    /// The repository's deploy/ folder.
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy").path

    /// A balancer's process, stopped and waited for.
    final class Balancer: Sendable {
        let process: Process
        init(_ executable: String, _ arguments: [String], log: String) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            (process.standardOutput, process.standardError) = (handle, handle)
            try process.run()
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Two servers trusting the balancer, a certificate for 127.0.0.1, and `body` with the balancer
    /// `start` makes from the folder, the servers' ports and the balancer's port.
    static func behind(_ start: (String, [Int], Int) throws -> Balancer,
                       _ body: (SyncClient, [TestSyncServer]) async throws -> Void) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let servers = try (0..<2).map { _ in
            try TestSyncServer(databaseURL: postgres.url, arguments: ["--trusted-proxy", "127.0.0.1", "--metrics", "127.0.0.1:0"])
        }
        defer { for server in servers { server.stop() } }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-balancer")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try Shell.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                   "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                                                   "-keyout", folder + "/privkey.pem", "-out", folder + "/fullchain.pem"]) == 0)
        let port = try TestPostgres.freePort()
        let balancer = try start(folder, servers.map(\.port), port)
        defer { balancer.stop() }
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .file(folder + "/fullchain.pem")
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: trusting))
        let client = try SyncClient(server: "https://127.0.0.1:\(port)", http: http)
        var healthy = false
        for _ in 0..<100 where !healthy {
            healthy = await client.isHealthy()
            if !healthy { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(healthy, "the balancer never answered: \((try? String(contentsOfFile: folder + "/balancer.log", encoding: .utf8)) ?? "")")
        try await body(client, servers)
        try await http.shutdown()
    }

    /// Accounts pushed and polled through the balancer reach both servers, and a change pushed
    /// straight to either wakes a poll waiting behind the balancer.
    static func exercise(_ client: SyncClient, _ servers: [TestSyncServer]) async throws {
        let test = TestAccount()
        var head = try await client.createAccount(test.genesis)
        for counter in 2...7 {
            head = try await client.push(LogBatch(head: head, entries: [test.record("via the balancer", after: head, counter: UInt64(counter), by: test.creator)]))
        }
        #expect(try await client.pull(test.account, after: 0, as: test.creator).head == head)
        var counter: UInt64 = 8
        for server in servers {
            let before = head, entry = test.record("direct", after: head, counter: counter, by: test.creator)
            head = try await withTaskExecutorPreference(DedicatedExecutor.shared) {
                async let waiting = client.pull(test.account, after: before.sequence, wait: 20, as: test.creator)
                try await Task.sleep(for: .milliseconds(300))
                let start = ContinuousClock.now
                let pushed = try await (try SyncClient(server: server.url)).push(LogBatch(head: before, entries: [entry]))
                let answer = try await waiting
                #expect(answer.head == pushed && answer.entries.count == 1 && ContinuousClock.now - start < .seconds(5))
                return pushed
            }
            counter += 1
        }
        // Both servers took requests through the balancer.
        for server in servers {
            let scrape = try await MetricsScrape.scrape(server)
            #expect(scrape.sum("keyhaven_sync_http_requests_total", #"route="/v1/accounts/{account}/entries""#) > 0)
        }
    }

    /// A file of deploy/ with the test's servers and certificate folder in place of the examples'.
    static func config(_ name: String, servers: [Int], folder: String) throws -> String {
        try String(contentsOfFile: deploy + "/" + name, encoding: .utf8)
            .replacingOccurrences(of: "127.0.0.1:8787", with: "127.0.0.1:\(servers[0])")
            .replacingOccurrences(of: "127.0.0.1:8788", with: "127.0.0.1:\(servers[1])")
            .replacingOccurrences(of: "/etc/ssl/keyhaven-sync", with: folder)
    }

    @Test("Behind nginx, as deploy/nginx-keyhaven-sync.conf says")
    func nginx() async throws {
        try await Self.behind({ folder, servers, port in
            let site = try Self.config("nginx-keyhaven-sync.conf", servers: servers, folder: folder)
                .replacingOccurrences(of: "listen 443 ssl;", with: "listen 127.0.0.1:\(port) ssl;")
            #expect(site.contains("127.0.0.1:\(port) ssl") && site.contains("127.0.0.1:\(servers[1])"))
            let user = getuid() == 0 ? "user root;\n" : ""
            let main = """
                \(user)worker_processes 1;
                error_log \(folder)/balancer.log;
                pid \(folder)/nginx.pid;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(folder)/body;
                    proxy_temp_path \(folder)/proxy;
                \(site)
                }
                """
            try main.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
            return try Balancer("/usr/sbin/nginx", ["-p", folder, "-c", folder + "/nginx.conf", "-g", "daemon off;"], log: folder + "/nginx.out")
        }, Self.exercise)
    }

    @Test("Behind HAProxy, as deploy/haproxy-keyhaven-sync.cfg says, its health checks on /v1/health")
    func haproxy() async throws {
        try await Self.behind({ folder, servers, port in
            let chain = try String(contentsOfFile: folder + "/fullchain.pem", encoding: .utf8) + String(contentsOfFile: folder + "/privkey.pem", encoding: .utf8)
            try chain.write(toFile: folder + "/haproxy.pem", atomically: true, encoding: .utf8)
            let section = try Self.config("haproxy-keyhaven-sync.cfg", servers: servers, folder: folder)
                .replacingOccurrences(of: "bind :443 ssl", with: "bind 127.0.0.1:\(port) ssl")
            #expect(section.contains("127.0.0.1:\(port) ssl") && section.contains("127.0.0.1:\(servers[1]) check"))
            try ("global\n    log stderr format raw local0\ndefaults\n    log global\n" + section).write(toFile: folder + "/haproxy.cfg", atomically: true, encoding: .utf8)
            return try Balancer("/usr/sbin/haproxy", ["-db", "-f", folder + "/haproxy.cfg"], log: folder + "/balancer.log")
        }, Self.exercise)
    }
}
