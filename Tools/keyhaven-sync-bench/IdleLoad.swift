import AsyncHTTPClient
import Foundation
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Synchronization

/// `idle URL[,URL...] DEVICES SECONDS`: DEVICES devices, each on an account of its own, spread over
/// the servers, each long-polling as a device does (30-second waits, renewed at once). Then two
/// phases of SECONDS each, announced on standard output for the script that samples the servers
/// and PostgreSQL meanwhile: `idle phase` (nothing changes) and `push phase` (one more device
/// pushes a change to a random one of those accounts every second, through the first server).
/// Prints the propagation from the push's start to the waiting device's answer (p50, p99, max) for
/// devices on the first server and on the others, and the polls open; fails when a change is never
/// seen or a poll fails.
struct IdleLoad {
    let urls: [String]
    let devices: Int
    let seconds: Int

    /// What the polling devices saw.
    final class Seen: Sendable {
        let open = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        /// Per account index: the sequence each pushed change will have, and when its push started.
        let pending = Mutex<[Int: (sequence: UInt64, started: ContinuousClock.Instant)]>([:])
        let propagation = Mutex<(same: [Duration], other: [Duration])>(([], []))
        let running = Atomic<Bool>(true)
    }

    func run() async throws {
        var pool = HTTPClient.Configuration()
        pool.timeout.connect = .seconds(30)
        pool.connectionPool = .init(idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: devices + 64)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: pool)
        let clients = try urls.map { try SyncClient(server: $0, http: http, timeout: .seconds(90)) }
        let accounts = try await Self.makeAccounts(devices, clients[0])
        print("\(devices) accounts made, devices on \(urls.count) servers: \(urls.joined(separator: " "))")
        // A pause before the polls, in which the script reads the servers' memory without them.
        print("polls start in 3 s")
        Self.flush()
        try await Task.sleep(for: .seconds(3))
        let seen = Seen()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, account) in accounts.enumerated() {
                let client = clients[index % clients.count]
                group.addTask { await Self.poll(account, index: index, client: client, sameServer: index % clients.count == 0, seen: seen) }
            }
            group.addTask {
                try await self.phases(accounts, pusher: clients[0], seen: seen)
                seen.running.store(false, ordering: .relaxed)
            }
            try await group.next()
            seen.running.store(false, ordering: .relaxed)
            // The polls end at their next answer (30 s at most); no need to wait for them.
            group.cancelAll()
        }
        try await http.shutdown()
    }

    /// The phases, the pushes, and the report.
    func phases(_ accounts: [BenchAccount], pusher: SyncClient, seen: Seen) async throws {
        let settled = ContinuousClock.now
        while seen.open.load(ordering: .relaxed) < devices, ContinuousClock.now - settled < .seconds(120) {
            try await Task.sleep(for: .milliseconds(200))
        }
        try await Self.waitForServers(devices)
        print("polls open: \(seen.open.load(ordering: .relaxed)) of \(devices); settling 12 s")
        // PostgreSQL reports a backend's transactions up to 10 s late: the setup's land before the phase.
        try await Task.sleep(for: .seconds(12))
        print("idle phase: start")
        Self.flush()
        var lowest = Int.max
        for _ in 0..<seconds {
            try await Task.sleep(for: .seconds(1))
            lowest = min(lowest, seen.open.load(ordering: .relaxed))
        }
        print("idle phase: end (polls open: at least \(lowest) of \(devices) each second)")
        print("push phase: start")
        Self.flush()
        var pushed = 0
        for _ in 0..<seconds {
            let tick = ContinuousClock.now
            let index = Int.random(in: 0..<accounts.count)
            let account = accounts[index]
            let started = ContinuousClock.now
            let sequence = account.knownSequence + 1
            seen.pending.withLock { $0[index] = (sequence, started) }
            try await account.push(by: 1, pusher)
            pushed += 1
            lowest = min(lowest, seen.open.load(ordering: .relaxed))
            try await Task.sleep(until: tick + .seconds(1))
        }
        print("push phase: end")
        Self.flush()
        // Every change seen, within 10 seconds of the last push.
        let waited = ContinuousClock.now
        while !seen.pending.withLock({ $0.isEmpty }), ContinuousClock.now - waited < .seconds(10) {
            try await Task.sleep(for: .milliseconds(100))
        }
        let missing = seen.pending.withLock { $0.count }
        let (same, other) = seen.propagation.withLock { $0 }
        Load.report("propagation, device on the pushing server (\(same.count) changes)", count: same.count, elapsed: nil, latencies: same)
        Load.report("propagation, device on another server (\(other.count) changes)", count: other.count, elapsed: nil, latencies: other)
        print("max: same server \(Self.milliseconds(same.max())), other \(Self.milliseconds(other.max())); \(pushed) pushes; polls open: at least \(lowest) of \(devices)")
        let failures = seen.failures.withLock { $0 }
        guard missing == 0, failures.isEmpty else {
            throw BenchError("FAILED: \(missing) change(s) never seen; \(failures.count) poll failure(s): \(failures.prefix(3).joined(separator: "; "))")
        }
    }

    /// With KEYHAVEN_BENCH_METRICS (the servers' metrics URLs, comma-separated), waits until the
    /// servers themselves count `devices` open polls: the client counts a poll open when it sends
    /// it, and the servers' first looks at the database follow for a while.
    static func waitForServers(_ devices: Int) async throws {
        guard let list = ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_METRICS"] else { return }
        let urls = list.split(separator: ",").map(String.init)
        let start = ContinuousClock.now
        var open = 0
        while ContinuousClock.now - start < .seconds(120) {
            open = 0
            for url in urls {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                let text = String(buffer: try await response.body.collect(upTo: 8 << 20))
                for line in text.split(separator: "\n") where line.hasPrefix("keyhaven_sync_open_polls ") {
                    open += Int(Double(line.split(separator: " ").last ?? "") ?? 0)
                }
            }
            if open >= devices { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        print("the servers count \(open) open polls")
    }

    /// One device's loop: poll, and when an answer brings the change pushed to its account, time it.
    static func poll(_ account: BenchAccount, index: Int, client: SyncClient, sameServer: Bool, seen: Seen) async {
        var after = account.knownSequence
        while seen.running.load(ordering: .relaxed) {
            seen.open.add(1, ordering: .relaxed)
            let answer: LogBatch
            do {
                answer = try await client.pull(account.id, after: after, wait: 30, as: account.devices[0])
            } catch {
                seen.open.subtract(1, ordering: .relaxed)
                guard seen.running.load(ordering: .relaxed) else { return }
                seen.failures.withLock { $0.append("\(error)") }
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            seen.open.subtract(1, ordering: .relaxed)
            let now = ContinuousClock.now
            after = max(after, answer.head.sequence)
            let matched = seen.pending.withLock { pending -> ContinuousClock.Instant? in
                guard let waiting = pending[index], answer.head.sequence >= waiting.sequence else { return nil }
                pending[index] = nil
                return waiting.started
            }
            if let started = matched {
                seen.propagation.withLock { sameServer ? $0.same.append(now - started) : $0.other.append(now - started) }
            }
        }
    }

    /// `count` accounts of two devices each (the one that polls, the one that pushes), 32 at once.
    static func makeAccounts(_ count: Int, _ client: SyncClient) async throws -> [BenchAccount] {
        try await withThrowingTaskGroup(of: [BenchAccount].self) { group in
            let workers = min(32, count)
            for worker in 0..<workers {
                group.addTask {
                    var made: [BenchAccount] = []
                    for _ in stride(from: worker, to: count, by: workers) { made.append(try await BenchAccount.make(client, devices: 2)) }
                    return made
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Standard output now: the script waits for the phase lines.
    static func flush() {
        _ = fflush(nil)
    }

    static func milliseconds(_ duration: Duration?) -> String {
        guard let duration else { return "-" }
        return String(format: "%.1f ms", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
    }
}
