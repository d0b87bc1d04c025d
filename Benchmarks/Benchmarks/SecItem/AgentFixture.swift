import Foundation

/// A keyhavend serving a fixture's home, for the SecItem benchmarks through the agent. The agent
/// binary is `$KEYHAVEN_BENCH_AGENT` (scripts/bench.sh builds it); without it those benchmarks
/// are skipped.
final class AgentFixture: @unchecked Sendable {
    // @unchecked: set up and torn down by the benchmark runner, one benchmark at a time.
    static let shared = AgentFixture()
    private var process: Process?
    private var runtime: String?

    static var executable: String? { ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_AGENT"] }

    /// Starts an agent for the current `KEYHAVEN_HOME` and sends this process's calls to it.
    func start() throws {
        guard let executable = Self.executable else { return }
        let runtime = NSTemporaryDirectory() + "keyhaven-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        setenv("XDG_RUNTIME_DIR", runtime, 1)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.environment = ProcessInfo.processInfo.environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: runtime + "/keyhaven/agent.sock") { usleep(10_000) }
        setenv("KEYHAVEN_AGENT", "on", 1)
        (self.process, self.runtime) = (process, runtime)
    }

    func stop() {
        setenv("KEYHAVEN_AGENT", "off", 1)
        process?.terminate()
        process?.waitUntilExit()
        if let runtime { try? FileManager.default.removeItem(atPath: runtime) }
        (process, runtime) = (nil, nil)
    }
}
