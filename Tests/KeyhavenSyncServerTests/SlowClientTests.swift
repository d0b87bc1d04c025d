import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
@testable import KeyhavenSyncServer
import NIOCore
import Testing

/// The server against clients that send their bodies slowly or not at all: they give back what
/// they hold, and everyone else's pushes go through meanwhile.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SlowClientTests {
    @Test("Two addresses each holding back the last byte of a 64 MiB push, and a third trickling: another client's push goes through at once; the stalled and the slow bodies are answered 408 and give their bytes back")
    func stalledAndSlowBodies() async throws {
        try await SyncServerTests.withServer(arguments: ["--body-timeout", "3", "--minimum-body-rate", "64"]) { server, _ in
            let client = try SyncClient(server: server.url)
            let test = TestAccount()
            var head = try await client.createAccount(test.genesis)
            let script = """
                import socket, sys, threading, time
                port = int(sys.argv[1]); results = {}
                start = time.monotonic()
                def answer(s, n):
                    s.settimeout(30)
                    try: results[n] += " %s after %d s" % (s.recv(200).split(b"\\r\\n")[0].decode(), time.monotonic() - start)
                    except OSError: results[n] += " no answer"
                def stall(n):
                    s = socket.socket(); s.bind(("127.0.0.%d" % n, 0)); s.connect(("127.0.0.1", port))
                    s.sendall(b"POST /v1/accounts/%032x/entries HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: %d\\r\\n\\r\\n" % (n, 64 << 20))
                    s.sendall(b"\\0" * ((64 << 20) - 1))
                    results[n] = "stalled"
                    answer(s, n)
                def trickle(n):
                    s = socket.socket(); s.bind(("127.0.0.%d" % n, 0)); s.connect(("127.0.0.1", port))
                    s.sendall(b"POST /v1/accounts/%032x/entries HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: %d\\r\\n\\r\\n" % (n, 1 << 20))
                    results[n] = "trickled"
                    s.settimeout(0.5)
                    try:
                        for _ in range(60):
                            s.sendall(b"\\0" * 1024)
                            try:
                                line = s.recv(200).split(b"\\r\\n")[0].decode()
                                results[n] += " %s after %d s" % (line, time.monotonic() - start)
                                return
                            except socket.timeout: pass
                    except OSError: results[n] += " cut"
                threads = [threading.Thread(target=stall, args=(n,)) for n in (31, 32)] + [threading.Thread(target=trickle, args=(33,))]
                for t in threads: t.start()
                while len([r for r in results.values() if r == "stalled"]) < 2: time.sleep(0.05)
                print("stalled", flush=True)
                for t in threads: t.join()
                for n in sorted(results): print(n, results[n])
                """
            var attack = try SyncServerTests.pythonClients(script, against: server, until: "stalled")
            // 128 MiB held by two addresses: a push from a third goes through, well within a minute.
            let started = ContinuousClock.now
            head = try await client.push(LogBatch(head: head, entries: [test.record("while stalled", after: head, counter: 2, by: test.creator)]))
            #expect(ContinuousClock.now - started < .seconds(10))
            let printed = attack.rest()
            let lines = printed.split(separator: "\n").filter { $0.first?.isNumber == true }
            #expect(lines.count == 3, "\(printed)")
            for line in lines {
                // Answered once the body stopped (3 s) or fell behind 64 KiB/s (after 3 s), not when the client gave up.
                #expect(line.contains("HTTP/1.1 408 Request Timeout after"), "\(line)")
                let seconds = line.split(separator: " ").dropLast(1).last.flatMap { Int($0) } ?? 99
                #expect(seconds <= 12, "\(line)")
            }
            #expect(try await client.pull(test.account, after: 0, as: test.creator).head == head)
        }
    }

    @Test("A body that stops, or falls below the minimum rate after the grace, is overdue; released, its address's share is free again and it takes nothing more")
    func receiptGivesBack() throws {
        var limits = SyncLimits()
        (limits.bodyIdle, limits.bodyGrace, limits.minimumBodyRate) = (.milliseconds(200), .milliseconds(400), 1 << 20)
        let budget = BodyBudget(perAddress: 10, total: 100)
        let receipt = BodyReceipt(budget: budget, key: "a", limit: 10, declared: 10, limits: limits)
        try receipt.append(ByteBuffer(bytes: [UInt8](repeating: 0, count: 8)))
        #expect(receipt.overdue() == nil)
        #expect(throws: BodyBudget.Refusal.self) { try budget.take(8, for: "a") }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(receipt.overdue()?.code == .timedOut)
        receipt.release()
        #expect(throws: Never.self) { try budget.take(10, for: "a") }
        #expect(throws: SyncServerError.self) { try receipt.append(ByteBuffer(bytes: [1])) }

        let slow = BodyReceipt(budget: BodyBudget(), key: "b", limit: 1 << 20, declared: nil, limits: limits)
        for _ in 0..<5 {
            try slow.append(ByteBuffer(bytes: [UInt8](repeating: 0, count: 1024)))
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(slow.overdue()?.message.contains("slower than 1 MiB a second") == true)
    }

    @Test("A body of no announced length holds its whole buffer, and the old one too while it grows; refused, it holds what it held")
    func receiptHoldsItsBuffer() throws {
        let mebibyte = 1 << 20, chunk = ByteBuffer(bytes: [UInt8](repeating: 7, count: 1 << 20))
        let roomy = BodyBudget(perAddress: 2 * mebibyte, total: 3 * mebibyte)
        let growing = BodyReceipt(budget: roomy, key: "a", limit: 2 * mebibyte, declared: nil, limits: SyncLimits())
        try growing.append(chunk)
        #expect(roomy.held == mebibyte)
        // 1 MiB kept, 1 MiB more for the larger buffer, 1 MiB while the first is copied: 3 MiB.
        try growing.append(chunk)
        #expect(roomy.held == 2 * mebibyte)
        #expect(growing.bytes.count == 2 * mebibyte && growing.bytes.allSatisfy { $0 == 7 })
        growing.release()
        #expect(roomy.held == 0)

        let tight = BodyBudget(perAddress: 2 * mebibyte, total: 3 * mebibyte - 1)
        let refused = BodyReceipt(budget: tight, key: "a", limit: 2 * mebibyte, declared: nil, limits: SyncLimits())
        try refused.append(chunk)
        #expect(throws: SyncServerError.self) { try refused.append(chunk) }
        #expect(tight.held == mebibyte && refused.bytes.count == mebibyte)
        refused.release()
        #expect(tight.held == 0)

        // A body whose length was announced holds its bytes as they come, not the room kept for them.
        let announced = BodyBudget(perAddress: 2 * mebibyte, total: 2 * mebibyte)
        let declared = BodyReceipt(budget: announced, key: "a", limit: 2 * mebibyte, declared: 2 * mebibyte, limits: SyncLimits())
        try declared.append(chunk)
        #expect(announced.held == mebibyte)
        try declared.append(chunk)
        #expect(announced.held == 2 * mebibyte)
        declared.release()
    }

    @Test("IPv6 clients count by their /64, IPv4-mapped ones as IPv4, IPv4 ones as they are")
    func clientKeys() {
        #expect(ClientKey.of("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientKey.of("::1") == "0:0:0:0::/64")
        #expect(ClientKey.of("::ffff:10.0.0.1") == "10.0.0.1")
        #expect(ClientKey.of("10.0.0.1") == "10.0.0.1")
        #expect(ClientKey.of("unknown") == "unknown")
        let budget = BodyBudget(perAddress: 10, total: 100)
        #expect(throws: BodyBudget.Refusal.self) {
            try budget.take(6, for: ClientKey.of("2001:db8::1"))
            try budget.take(6, for: ClientKey.of("2001:db8::2"))
        }
        #expect(throws: Never.self) { try budget.take(6, for: ClientKey.of("2001:db8:0:1::1")) }
    }
}
