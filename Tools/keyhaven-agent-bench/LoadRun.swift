import Foundation
import KeyhavenAgentClient

/// Many client processes reading through the agent at once, against one process reading in
/// process on the same cores: throughput and each client's latency.
struct LoadRun {
    let options: Options
    let size: Int

    /// What the client processes do: look items up, or send the agent's echo (the floor of the
    /// path under load: no keychain touched).
    enum Work: String {
        case copyMatching = "copy"
        case echo
        /// `SecItemUpdate` of one item's data (what `--only count` counts of a write).
        case update
        /// `SecItemAdd` of a new item, its account unique to this process.
        case add
    }

    /// The client processes' run: calls a second, their times, the CPU time a call.
    struct Clients {
        let rate: Double
        let latencies: Latencies
        /// CPU time a call, in microseconds: the agent's, and the clients' (each client's own
        /// while it called); nil when the agent's could not be read.
        let agentCPUPerCall: Double?
        let clientsCPUPerCall: Double
        /// The slowest client's p99 and the fewest calls any client made.
        let worstClientP99: Double
        let fewestCalls: Int
    }

    struct Result {
        /// Calls a second in process: one thread, and one thread a core; and the process's CPU
        /// time a call, in microseconds.
        let inProcess: [(threads: Int, rate: Double, latencies: Latencies, cpuPerCall: Double)]
        /// One thread in process that sleeps ``napMicroseconds`` before each call, as a client or
        /// an agent's thread sleeps between calls: its calls' times and CPU time a call, and the
        /// CPU time of one such sleep alone (the same loop without the call), in microseconds.
        let afterNaps: (latencies: Latencies, cpuPerCall: Double, cpuPerNap: Double)
        /// The clients looking items up through the agent, then the same clients echoing.
        let lookUps: Clients
        let echoes: Clients
        /// The same clients looking items up in process, each reading the keychain file itself:
        /// what as many programs get without an agent, on the same cores.
        let inProcessClients: Clients
    }

    func run() throws -> Result {
        let home = try Fixture.use(items: size, folder: options.fixtures)
        var inProcess: [(threads: Int, rate: Double, latencies: Latencies, cpuPerCall: Double)] = []
        for threads in Set([1, ProcessInfo.processInfo.activeProcessorCount]).sorted() {
            let (count, latencies, cpu) = Self.readInThreads(threads, size: size, seconds: options.seconds)
            inProcess.append((threads, Double(count) / options.seconds, latencies, Double(cpu) / 1000 / Double(max(1, count))))
        }
        let (napped, nappedLatencies, nappedCPU) = Self.readInThreads(1, size: size, seconds: options.seconds, napMicroseconds: Self.napMicroseconds)
        let afterNaps = (nappedLatencies, Double(nappedCPU) / 1000 / Double(max(1, napped)), Self.cpuPerNap())
        let agent = try BenchAgent(executable: options.agent, home: home)
        defer { agent.stop() }
        let lookUps = try clients(.copyMatching, agent: agent)
        let echoes = try clients(.echo, agent: agent)
        return Result(inProcess: inProcess, afterNaps: afterNaps, lookUps: lookUps, echoes: echoes,
                      inProcessClients: try clients(.copyMatching, agent: agent, throughAgent: false))
    }

    /// Starts ``Options/clients`` client processes doing `work` through `agent` (or in process)
    /// for ``Options/seconds``, all at once, and gathers what they measured.
    private func clients(_ work: Work, agent: BenchAgent, throughAgent: Bool = true) throws -> Clients {
        let start = now() + 3_000_000_000  // every client connected and warm by then
        let end = start + UInt64(options.seconds * 1e9)
        var workers: [(Process, Pipe)] = []
        for _ in 0..<options.clients {
            let process = Process()
            let pipe = Pipe()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["worker", work.rawValue, String(size), String(start), String(end), throughAgent ? "agent" : "process"]
            // This process's environment as it is now (setenv named the fixture and the agent's folder).
            var environment = ProcessInfo.processInfo.environment
            for name in ["KEYHAVEN_HOME", "XDG_RUNTIME_DIR"] { environment[name] = getenv(name).map { String(cString: $0) } }
            environment["KEYHAVEN_AGENT"] = throughAgent ? "on" : "off"
            process.environment = environment
            process.standardOutput = pipe
            try process.run()
            workers.append((process, pipe))
        }
        // The agent's CPU time over the clients' window (they print only after it).
        sleep(until: start)
        let agentBefore = CPUTime.of(pid: agent.process.processIdentifier)
        sleep(until: end)
        let agentAfter = CPUTime.of(pid: agent.process.processIdentifier)
        var all = Latencies()
        var worstP99 = 0.0
        var fewest = Int.max
        var clientsCPU: UInt64 = 0
        for (process, pipe) in workers {
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchFailure("a client failed (exit \(process.terminationStatus))") }
            var fields = output.split(whereSeparator: \.isWhitespace)[...]
            guard let first = fields.popFirst(), first.hasPrefix("cpu="), let cpu = UInt64(first.dropFirst(4)) else {
                throw BenchFailure("a client did not print its CPU time first")
            }
            clientsCPU += cpu
            var mine = Latencies()
            for field in fields {
                guard let value = UInt64(field) else { throw BenchFailure("a client printed \(field)") }
                mine.append(value)
            }
            fewest = min(fewest, mine.count)
            worstP99 = max(worstP99, mine.p99)
            all.append(contentsOf: mine)
        }
        let calls = Double(max(1, all.count))
        let agentCPU = agentBefore.flatMap { before in agentAfter.map { Double($0 &- before) / 1000 / calls } }
        return Clients(rate: Double(all.count) / options.seconds, latencies: all, agentCPUPerCall: agentCPU,
                       clientsCPUPerCall: Double(clientsCPU) / 1000 / calls, worstClientP99: worstP99, fewestCalls: fewest)
    }

    /// How long the napping thread sleeps before each call: about as long as a client's call
    /// through the agent waits for its answer when nothing else runs.
    static let napMicroseconds: UInt32 = 100

    /// The CPU time of one sleep of ``napMicroseconds`` and its wake-up (microseconds), over a
    /// second of them.
    static func cpuPerNap() -> Double {
        let cpuBefore = CPUTime.ofThisProcess()
        let end = now() + 1_000_000_000
        var naps = 0
        while now() < end {
            usleep(napMicroseconds)
            naps += 1
        }
        return Double(CPUTime.ofThisProcess() &- cpuBefore) / 1000 / Double(max(1, naps))
    }

    /// Reads random items in process on `threads` threads for `seconds`, each sleeping
    /// `napMicroseconds` before each call (0: none): the calls made, their times, and the
    /// process's CPU time meanwhile (nanoseconds).
    static func readInThreads(_ threads: Int, size: Int, seconds: Double, napMicroseconds: UInt32 = 0) -> (Int, Latencies, UInt64) {
        BenchAgent.route(throughAgent: false)
        for index in 0..<200 { BenchCalls.copyMatching(index % size) }
        let cpuBefore = CPUTime.ofThisProcess()
        let end = now() + UInt64(seconds * 1e9)
        let results = UnsafeMutableBufferPointer<Latencies>.allocate(capacity: threads)
        results.initialize(repeating: Latencies())
        defer { results.deallocate() }
        let base = UnsafeSendable(results)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SystemRandomNumberGenerator()
            var mine = Latencies()
            while now() < end {
                let index = Int.random(in: 0..<size, using: &random)
                if napMicroseconds > 0 { usleep(napMicroseconds) }
                timed(&mine) { BenchCalls.copyMatching(index) }
            }
            base.value[thread] = mine
        }
        let cpu = CPUTime.ofThisProcess() &- cpuBefore
        var all = Latencies()
        for part in results { all.append(contentsOf: part) }
        return (all.count, all, cpu)
    }

    /// One call of `work` (given the index of the item to look up), through the agent on `socket`.
    static func call(for work: Work, socket: AgentSocket, home: String?) -> (Int) -> Void {
        let payload = Data(repeating: 0x5A, count: 32)
        return BenchCalls.call(for: work) ?? { _ in BenchAgent.echo(payload, socket: socket, home: home) }
    }

    /// One client process: does `work` through the agent (or in process) from `start` to `end`
    /// (monotonic nanoseconds) and prints its CPU time over that window (`cpu=` nanoseconds),
    /// then each call's time in nanoseconds. Look-ups go through the library
    /// (`KEYHAVEN_AGENT=on`, or `off`), echoes on the library's own kept connection.
    static func worker(_ work: Work, size: Int, start: UInt64, end: UInt64, throughAgent: Bool) {
        BenchAgent.route(throughAgent: throughAgent)
        var random = SystemRandomNumberGenerator()
        let socket = AgentSocket.current()
        let home = ProcessInfo.processInfo.environment["KEYHAVEN_HOME"]
        let call = Self.call(for: work, socket: socket, home: home)
        for _ in 0..<20 { call(Int.random(in: 0..<size, using: &random)) }
        sleep(until: start)
        var latencies = Latencies()
        let cpuBefore = CPUTime.ofThisProcess()
        while now() < end {
            let index = Int.random(in: 0..<size, using: &random)
            timed(&latencies) { call(index) }
        }
        print("cpu=\(CPUTime.ofThisProcess() &- cpuBefore)")
        print(latencies.samples.map(String.init).joined(separator: " "))
    }
}

/// A buffer written by distinct threads at distinct indices.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
