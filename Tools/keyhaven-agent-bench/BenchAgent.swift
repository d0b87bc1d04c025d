import Foundation
import KeyhavenAgentClient

/// A keyhavend serving one fixture's home on a socket in a private temporary folder.
final class BenchAgent {
    let process = Process()
    let runtime: String
    let socket: AgentSocket
    let home: String
    /// The agent running now, stopped by ``fail(_:)``.
    nonisolated(unsafe) static var current: BenchAgent?

    init(executable: String, home: String) throws {
        self.home = home
        runtime = NSTemporaryDirectory() + "keyhaven-agent-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        socket = AgentSocket(path: runtime + "/keyhaven/agent.sock")
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = home
        environment["XDG_RUNTIME_DIR"] = runtime
        environment.removeValue(forKey: "KEYHAVEN_AGENT_SOCKET")
        process.executableURL = URL(fileURLWithPath: executable)
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Up to 30 s (an agent under valgrind takes seconds to start), unless it has exited.
        for _ in 0..<6000 where process.isRunning && !FileManager.default.fileExists(atPath: socket.path) { usleep(5_000) }
        guard FileManager.default.fileExists(atPath: socket.path) else { throw BenchFailure("keyhavend did not start (\(executable))") }
        setenv("XDG_RUNTIME_DIR", runtime, 1)
        unsetenv("KEYHAVEN_AGENT_SOCKET")
        BenchAgent.current = self
    }

    /// Library calls of this process go to the agent (`true`) or stay in process.
    static func route(throughAgent: Bool) { setenv("KEYHAVEN_AGENT", throughAgent ? "on" : "off", 1) }

    /// One echo on the library's own kept connection.
    func echo(_ payload: Data) { Self.echo(payload, socket: socket, home: home) }

    /// One echo to the agent on `socket`, on the library's own kept connection.
    static func echo(_ payload: Data, socket: AgentSocket, home: String?) {
        do {
            _ = try AgentConnectionPool.shared.send(.echo(data: payload), socket: socket, home: home)
        } catch {
            fail("echo failed: \(error)")
        }
    }

    func stop() {
        BenchAgent.current = nil
        AgentConnectionPool.shared.removeAll()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: runtime)
        BenchAgent.route(throughAgent: false)
    }
}
