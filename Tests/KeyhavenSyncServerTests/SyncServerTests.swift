import AsyncHTTPClient
import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import KeyhavenSyncServer
import NIOCore
import NIOSSL
import Testing

/// `keyhaven-sync-server` itself, on a throw-away PostgreSQL cluster, driven over HTTP by the
/// devices' client (`SyncClient`) and by raw requests a hostile or broken client would send.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncServerTests {
    /// A cluster and a server on it for `body`.
    static func withServer(arguments: [String] = [], _ body: (TestSyncServer, TestPostgres) async throws -> Void) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url, arguments: arguments)
        defer { server.stop() }
        try await body(server, postgres)
    }

    /// A Python script of raw clients against `server` (its port is the script's argument), and
    /// what it printed up to and including `marker`; ``PythonClients/rest()`` waits for the rest.
    static func pythonClients(_ script: String, against server: TestSyncServer, until marker: String) throws -> PythonClients {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, server.url.split(separator: ":").last.map(String.init) ?? ""]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var clients = PythonClients(process: process, out: out)
        while !clients.printed.contains(marker) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            clients.printed += String(decoding: chunk, as: UTF8.self)
        }
        return clients
    }

    struct PythonClients {
        let process: Process
        let out: Pipe
        var printed = ""

        /// Everything the script printed, once it has ended.
        mutating func rest() -> String {
            printed += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return printed
        }
    }

    /// A raw request: status, `Keyhaven-Error` and body.
    static func raw(_ method: String, _ url: String, body: [UInt8]? = nil, headers: [(String, String)] = []) async throws
        -> (status: Int, code: String?, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "Keyhaven-Error"), Array(buffer: bytes))
    }

    static func refusal(_ body: () async throws -> Void) async -> SyncClientError? {
        do {
            try await body()
            return nil
        } catch let error as SyncClientError {
            return error
        } catch {
            return nil
        }
    }

    @Test("Create, push and pull over HTTP; a pull needs a signature of a device on the account, fresh and for that very request")
    func pushAndPullSigned() async throws {
        try await Self.withServer { server, _ in
            let client = try SyncClient(server: server.url)
            let test = TestAccount()
            var head = try await client.createAccount(test.genesis)
            for index in 0..<3 {
                let entry = test.record("item \(index)", after: head, counter: UInt64(index) + 2, by: test.creator)
                head = try await client.push(LogBatch(head: head, entries: [entry]))
            }
            let pulled = try await client.pull(test.account, after: 0, as: test.creator)
            #expect(pulled.head == head && pulled.entries.count == 4)
            #expect(try LogState(account: test.account).verifying(pulled.entries, serverHead: pulled.head).head == head)
            // A device not on the account is forbidden; an unsigned request is unauthorized.
            #expect(await Self.refusal { _ = try await client.pull(test.account, after: 0, as: DeviceIdentity()) }?.status == 403)
            let path = "/v1/accounts/\(test.account.hex)/entries?after=0&wait=0"
            #expect(try await Self.raw("GET", server.url + path).status == 401)
            // A signature for another target, or an old one, does not open this one.
            let other = RequestSignature(method: "GET", target: path.replacingOccurrences(of: "after=0", with: "after=1"), body: [], by: test.creator)
            #expect(try await Self.raw("GET", server.url + path, headers: other.headers.map { ($0.name, $0.value) }).status == 401)
            let old = RequestSignature(method: "GET", target: path, body: [], date: Int64(Date().timeIntervalSince1970) - 3600, by: test.creator)
            #expect(try await Self.raw("GET", server.url + path, headers: old.headers.map { ($0.name, $0.value) }).status == 401)
            let fresh = RequestSignature(method: "GET", target: path, body: [], by: test.creator)
            #expect(try await Self.raw("GET", server.url + path, headers: fresh.headers.map { ($0.name, $0.value) }).status == 200)
            // The account a device is on: to that device's signature only.
            #expect(try await client.account(of: test.creator) == test.account)
            #expect(try await Self.raw("GET", server.url + "/v1/devices/\(test.creator.id.hex)/account").status == 401)
            #expect(await Self.refusal { _ = try await client.account(of: DeviceIdentity()) }?.status == 404)
            // A second push at the old head is a conflict.
            let stale = test.record("late", after: pulled.entries[1].head, counter: 9, by: test.creator)
            #expect(await Self.refusal { _ = try await client.push(LogBatch(head: pulled.entries[1].head, entries: [stale])) }?.isConflict == true)
        }
    }

    @Test("A long poll answers as soon as another device pushes")
    func longPoll() async throws {
        try await Self.withServer { server, _ in
            let client = try SyncClient(server: server.url)
            let test = TestAccount()
            var head = try await client.createAccount(test.genesis)
            // A round shows the poll answering a push only if the push landed well inside the
            // poll's wait. On a machine so loaded that the push itself takes half the wait (CI has
            // seen 25 s), the round shows nothing either way and is played again.
            let wait = 30
            var shown = false
            // The client on a thread of its own: the other suites' waits for `keyhaven` hold the
            // cooperative pool's threads, and pushes waiting for one took 19-25 s.
            try await withTaskExecutorPreference(DedicatedExecutor.shared) {
                for round in 0..<3 where !shown {
                    let (started, from) = (ContinuousClock.now, head.sequence)
                    async let waiting = client.pull(test.account, after: from, wait: wait, as: test.creator)
                    try await Task.sleep(for: .milliseconds(500))
                    let entry = test.record("new \(round)", after: head, counter: UInt64(round) + 2, by: test.creator)
                    let pushed = try await client.push(LogBatch(head: head, entries: [entry]))
                    let pushedAfter = ContinuousClock.now - started
                    let answer = try await waiting
                    let answeredAfter = ContinuousClock.now - started
                    head = pushed
                    guard pushedAfter < .seconds(wait / 2) else {
                        print("long poll: round \(round) pushed only after \(pushedAfter); played again")
                        continue
                    }
                    #expect(answer.entries.count == 1 && answer.head == pushed)
                    // Answered when the push landed, not when the wait ran out.
                    #expect(answeredAfter < .seconds(wait - 2), "answered after \(answeredAfter)")
                    shown = true
                }
            }
            #expect(shown, "three pushes each took more than half the poll's wait")
            // Nothing new: the poll ends empty after its wait, with the head.
            let empty = try await client.pull(test.account, after: head.sequence, wait: 1, as: test.creator)
            #expect(empty.entries.isEmpty && empty.head == head)
        }
    }

    @Test("Malformed, misdirected and oversized requests get a 4xx naming the problem, and change nothing")
    func badRequests() async throws {
        try await Self.withServer { server, _ in
            let client = try SyncClient(server: server.url)
            let test = TestAccount()
            let head = try await client.createAccount(test.genesis)
            let garbage = try await Self.raw("POST", server.url + "/v1/accounts", body: Array("not an entry".utf8))
            #expect(garbage.status == 400 && garbage.code == "badRequest")
            #expect(try await Self.raw("POST", server.url + "/v1/accounts/xyz/entries", body: []).status == 400)
            // Entries of one account pushed to another's address.
            let entry = test.record("x", after: head, counter: 2, by: test.creator)
            let misdirected = try await Self.raw("POST", server.url + "/v1/accounts/\(AccountID().hex)/entries",
                                                 body: LogBatch(head: head, entries: [entry]).wireBytes)
            #expect(misdirected.status == 400)
            // A body one byte short, and a count that lies.
            var bytes = LogBatch(head: head, entries: [entry]).wireBytes
            bytes.removeLast()
            #expect(try await Self.raw("POST", server.url + "/v1/accounts/\(test.account.hex)/entries", body: bytes).status == 400)
            var lying = head.wireBytes
            lying += [0xFF, 0xFF, 0xFF, 0x7F]
            #expect(try await Self.raw("POST", server.url + "/v1/accounts/\(test.account.hex)/entries", body: lying).status == 400)
            // Over the body limit.
            let huge = [UInt8](repeating: 0, count: (64 << 20) + 1)
            let tooLarge = try await Self.raw("POST", server.url + "/v1/accounts/\(test.account.hex)/entries", body: huge)
            #expect(tooLarge.status == 413, "\(tooLarge.status) \(String(decoding: tooLarge.body, as: UTF8.self))")
            #expect(try await Self.raw("GET", server.url + "/v1/accounts/\(test.account.hex)/entries?after=-1").status == 400)
            #expect(try await Self.raw("GET", server.url + "/v1/nothing").status == 404)
            // Nothing changed.
            #expect(try await client.pull(test.account, after: 0, as: test.creator).head == head)
            // The refusals' messages are in the server's words, never the request's.
            #expect(!server.output.contains("not an entry"))
        }
    }

    @Test("A database URL with a password works (and the password is never printed)")
    func databasePassword() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        // The test cluster trusts loopback connections, so any password is taken: what matters is
        // that the URL is read and the password stays out of the output.
        let url = "postgres://\(postgres.user):s3cret%2Fcanary@127.0.0.1:\(postgres.port)/\(postgres.database)?sslmode=disable"
        let server = try TestSyncServer(databaseURL: url)
        defer { server.stop() }
        #expect(await (try SyncClient(server: server.url)).isHealthy())
        #expect(!server.output.contains("s3cret") && server.output.contains("postgres://\(postgres.user)@127.0.0.1"))
    }

    @Test("Past its rate a client gets 429 with Retry-After; the server keeps serving")
    func rateLimit() async throws {
        try await Self.withServer(arguments: ["--rate-limit", "2"]) { server, _ in
            // At once, so that a loaded machine cannot space them out past the rate.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await Self.raw("GET", server.url + "/v1/health").status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.contains(200) && statuses.contains(429) && Set(statuses).isSubset(of: [200, 429]), "\(statuses)")
            try await Task.sleep(for: .seconds(1))
            #expect(try await Self.raw("GET", server.url + "/v1/health").status == 200)
        }
    }

    @Test("Behind a trusted proxy each forwarded client has its own rate; from anyone else X-Forwarded-For changes nothing")
    func trustedProxy() async throws {
        func burst(_ server: TestSyncServer, forwardedFor: @escaping @Sendable (Int) -> String) async throws -> [Int] {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask { try await Self.raw("GET", server.url + "/v1/health", headers: [("X-Forwarded-For", forwardedFor(index))]).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        try await Self.withServer(arguments: ["--rate-limit", "2", "--trusted-proxy", "127.0.0.1"]) { server, _ in
            // One client behind the proxy spends its burst; another, behind the same proxy, has its own.
            let spent = try await burst(server) { _ in "203.0.113.7" }
            let other = try await Self.raw("GET", server.url + "/v1/health", headers: [("X-Forwarded-For", "198.51.100.1, 203.0.113.9")])
            #expect(spent.contains(429) && other.status == 200, "\(spent) \(other.status)")
        }
        try await Self.withServer(arguments: ["--rate-limit", "2"]) { server, _ in
            // Not a trusted peer: a client naming itself a new address each time is still one client.
            let forged = try await burst(server) { "10.0.\($0).1" }
            #expect(forged.contains(429), "\(forged)")
        }
        #expect(ClientAddressMiddleware.client(forwardedFor: ["198.51.100.1, 203.0.113.9", "10.0.0.2"], trusted: ["10.0.0.2"]) == "203.0.113.9")
        #expect(ClientAddressMiddleware.client(forwardedFor: [], trusted: ["10.0.0.2"]) == nil)
        let refused = try TestSyncServer.runToExit(["--database-url", "postgres://kc@127.0.0.1:1/keyhaven", "--trusted-proxy", "lb.example"])
        #expect(refused.status != 0 && refused.output.contains("--trusted-proxy is an IP address"))
    }

    @Test("Plain HTTP on a non-loopback address, a bad database URL or half a TLS pair: a message and a non-zero exit, at once")
    func refusedArguments() throws {
        let database = "postgres://kc@127.0.0.1:1/keyhaven"
        let open = try TestSyncServer.runToExit(["--database-url", database, "--bind", "0.0.0.0:8787"])
        #expect(open.status != 0 && open.output.contains("loopback"))
        let remote = try TestSyncServer.runToExit(["--database-url", database, "--bind", "192.168.1.10:8787"])
        #expect(remote.status != 0)
        let wrongScheme = try TestSyncServer.runToExit(["--database-url", "mysql://kc@127.0.0.1/keyhaven", "--bind", "127.0.0.1:0"])
        #expect(wrongScheme.status != 0 && wrongScheme.output.contains("postgres://"))
        let half = try TestSyncServer.runToExit(["--database-url", database, "--bind", "127.0.0.1:0", "--tls-key", "/nonexistent"])
        #expect(half.status != 0 && half.output.contains("go together"))
        // A password in the URL is never printed.
        let secret = try TestSyncServer.runToExit(["--database-url", "postgres://kc:hunter2-canary@127.0.0.1:1/", "--bind", "127.0.0.1:0"])
        #expect(secret.status != 0 && !secret.output.contains("hunter2-canary"))
    }

    @Test("--database-url-file: the URL from a file's first line (systemd's LoadCredential), so its password is on no command line; one of the two options, a file that cannot be read refused")
    func databaseURLFromFile() async throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-url-file")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let file = folder + "/database-url"
        try (postgres.url + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let server = try TestSyncServer(databaseURLFile: file)
        defer { server.stop() }
        let health = try await Self.raw("GET", server.url + "/v1/health")
        #expect(health.status == 200)
        let both = try TestSyncServer.runToExit(["--database-url", postgres.url, "--database-url-file", file, "--bind", "127.0.0.1:0"])
        #expect(both.status != 0 && both.output.contains("one of --database-url and --database-url-file"), "\(both.output)")
        let neither = try TestSyncServer.runToExit(["--bind", "127.0.0.1:0"])
        #expect(neither.status != 0 && neither.output.contains("one of --database-url and --database-url-file"))
        let missing = try TestSyncServer.runToExit(["--database-url-file", folder + "/absent", "--bind", "127.0.0.1:0"])
        #expect(missing.status != 0 && missing.output.contains("cannot be read"), "\(missing.output)")
        try "mysql://kc:hunter2-canary@127.0.0.1/keyhaven\n".write(toFile: file, atomically: true, encoding: .utf8)
        let wrong = try TestSyncServer.runToExit(["--database-url-file", file, "--bind", "127.0.0.1:0"])
        #expect(wrong.status != 0 && wrong.output.contains("postgres://") && !wrong.output.contains("hunter2-canary"))
    }

    @Test("With a certificate and key the server speaks HTTPS on any address; the client checks the certificate")
    func tls() async throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-tls")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (certificate, key) = (folder + "/server.pem", folder + "/server-key.pem")
        #expect(try Shell.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                   "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                                                   "-keyout", key, "-out", certificate]) == 0)
        try await Self.withServer(arguments: ["--tls-certificate", certificate, "--tls-key", key]) { server, _ in
            let https = "https://127.0.0.1:\(server.port)"
            var trusting = TLSConfiguration.makeClientConfiguration()
            trusting.trustRoots = .file(certificate)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: trusting))
            let trusted = try SyncClient(server: https, http: http)
            #expect(await trusted.isHealthy())
            // The system's roots do not know this certificate: no connection.
            #expect(await !(try SyncClient(server: https, timeout: .seconds(3))).isHealthy())
            try await http.shutdown()
        }
    }

    @Test("The client takes https, or http to a loopback address, and nothing else")
    func clientSchemes() throws {
        for accepted in ["https://sync.example.com", "https://sync.example.com:8443/", "http://127.0.0.1:8787", "http://localhost:1", "http://[::1]:2"] {
            #expect(throws: Never.self, "\(accepted)") { _ = try SyncClient(server: accepted) }
        }
        for refused in ["http://sync.example.com", "http://10.0.0.1:80", "ftp://127.0.0.1", "sync.example.com", "https://user@sync.example.com",
                        "http://127.0.0.1.example.com"] {
            #expect(throws: SyncClientError.self, "\(refused)") { _ = try SyncClient(server: refused) }
        }
    }

    @Test("A server that is down: the client says it could not be reached")
    func serverDown() async throws {
        let client = try SyncClient(server: "http://127.0.0.1:\(try TestPostgres.freePort())", timeout: .seconds(5))
        let error = await Self.refusal { _ = try await client.createAccount(TestAccount().genesis) }
        #expect(error?.code == .unreachable)
    }

    @Test("The pairing relay: each side's messages in order, at most eight, slots of 32 bytes")
    func pairingRelay() async throws {
        try await Self.withServer { server, _ in
            let client = try SyncClient(server: server.url)
            let slot = (0..<32).map { _ in UInt8.random(in: 0...255) }
            async let waiting = client.pairingMessages(slot: slot, side: 1, after: 0, wait: 20)
            try await Task.sleep(for: .milliseconds(300))
            try await client.postPairing(slot: slot, side: 1, message: [1, 2, 3])
            #expect(try await waiting == [[1, 2, 3]])
            for number in 2...8 { try await client.postPairing(slot: slot, side: 1, message: [UInt8(number)]) }
            #expect(await Self.refusal { try await client.postPairing(slot: slot, side: 1, message: [9]) }?.status == 507)
            #expect(try await client.pairingMessages(slot: slot, side: 1, after: 6, wait: 0) == [[7], [8]])
            #expect(try await client.pairingMessages(slot: slot, side: 0, after: 0, wait: 0).isEmpty)
            #expect(try await Self.raw("POST", server.url + "/v1/pairing/abcd/0", body: [1]).status == 400)
            #expect(try await Self.raw("POST", server.url + "/v1/pairing/\(Hex.encode(slot))/2", body: [1]).status == 400)
        }
    }

    @Test("A flood of large bodies, each holding back its last byte: refused at each route's limit or the in-flight budget, the memory stays flat, others are served")
    func bodyFlood() async throws {
        try await Self.withServer { server, _ in
            let client = try SyncClient(server: server.url)
            func rss() throws -> Int {
                let status = try String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)
                let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
                return (Int(line.filter(\.isNumber)) ?? 0) << 10
            }
            #expect(await client.isHealthy())
            let before = try rss()
            // Fourteen clients, each from its own loopback address, each sending a 60 MiB body in
            // chunks (no length announced) and holding back its end: eight to the pairing relay
            // (64 KiB at most), six as pushes (64 MiB at most, 256 MiB in flight in all).
            let slot = String(repeating: "ab", count: 32)
            let script = """
                import socket, sys, threading, time
                port = int(sys.argv[1]); results = {}
                def flood(n, path):
                    s = socket.socket(); s.bind(("127.0.0.%d" % (10 + n), 0)); s.connect(("127.0.0.1", port))
                    s.sendall(("POST %s HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n" % path).encode())
                    chunk = b"%x\\r\\n" % (1 << 20) + b"\\0" * (1 << 20) + b"\\r\\n"
                    try:
                        for _ in range(60): s.sendall(chunk)
                        results[n] = "held"
                        time.sleep(6)
                    except OSError:
                        results[n] = "cut"
                    s.settimeout(5)
                    try: results[n] += " " + s.recv(200).split(b"\\r\\n")[0].decode()
                    except OSError as e: results[n] += " no answer"
                threads = [threading.Thread(target=flood, args=(n, "/v1/pairing/\(slot)/0" if n < 8 else "/v1/accounts/%032x/entries" % n)) for n in range(14)]
                for t in threads: t.start()
                time.sleep(4); print("flooding", flush=True)
                for t in threads: t.join()
                for n in sorted(results): print(n, results[n])
                """
            var flood = try Self.pythonClients(script, against: server, until: "flooding")
            // While the bodies are held: the server still answers, and holds at most its budget.
            #expect(await client.isHealthy())
            let during = try rss()
            let printed = flood.rest()
            // The budget (256 MiB) bounds the bodies' buffers; 32 MiB more is the connections' own.
            #expect(during - before < 288 << 20, "RSS grew from \(before >> 20) MiB to \(during >> 20) MiB")
            let lines = printed.split(separator: "\n").filter { $0.first?.isNumber == true }
            #expect(lines.count == 14, "\(printed)")
            // The relay refuses past 64 KiB. Of the pushes, three or four fit the budget: a body of
            // no announced length holds its whole buffer, and the old one while it moves to a larger.
            for line in lines where Int(line.split(separator: " ")[0])! < 8 { #expect(line.contains("413"), "\(line)") }
            let pushes = lines.filter { Int($0.split(separator: " ")[0])! >= 8 }
            #expect(pushes.filter { $0.contains("503") }.count >= 2, "\(pushes)")
            #expect(await client.isHealthy())
        }
    }

    @Test("Two servers on one database serve the same accounts; one killed, the other goes on")
    func twoServers() async throws {
        try await Self.withServer { first, postgres in
            let second = try TestSyncServer(databaseURL: postgres.url)
            defer { second.stop() }
            let (a, b) = (try SyncClient(server: first.url), try SyncClient(server: second.url))
            let test = TestAccount()
            let head = try await a.createAccount(test.genesis)
            let next = try await b.push(LogBatch(head: head, entries: [test.record("via b", after: head, counter: 2, by: test.creator)]))
            #expect(try await a.pull(test.account, after: 0, as: test.creator).head == next)
            first.stop(kill: true)
            #expect(try await b.pull(test.account, after: 0, as: test.creator).entries.count == 2)
        }
    }
}
