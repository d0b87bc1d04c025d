import Foundation
import Synchronization

/// The built `keyhaven-sync-server`, started for one test on a free loopback port (`--bind
/// 127.0.0.1:0`): it is ready once it prints its listening line, whose port the test then uses.
/// Everything it prints is kept, for the tests that look for canaries in its logs.
public final class TestSyncServer: Sendable {
    public static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyhaven-sync-server")
    }

    private let process: Process
    private let printed: Printed
    public let port: Int

    public var url: String { "http://127.0.0.1:\(port)" }
    /// The server's process id (its memory is read from /proc).
    public var pid: Int32 { process.processIdentifier }
    public var output: String { printed.text.withLock { $0 } }

    public convenience init(databaseURL: String, port requested: Int = 0, arguments: [String] = []) throws {
        try self.init(database: ["--database-url", databaseURL], port: requested, arguments: arguments)
    }

    /// A server that reads its database's URL from a file (`--database-url-file`).
    public convenience init(databaseURLFile: String, arguments: [String] = []) throws {
        try self.init(database: ["--database-url-file", databaseURLFile], port: 0, arguments: arguments)
    }

    private init(database: [String], port requested: Int, arguments: [String]) throws {
        let process = Process(), pipe = Pipe(), printed = Printed()
        process.executableURL = Self.executable
        process.arguments = database + ["--bind", "127.0.0.1:\(requested)", "--log-level", "debug"] + arguments
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        var port: Int?
        while port == nil, Date() < deadline, process.isRunning {
            port = printed.text.withLock { Self.port(in: $0) }
            if port == nil { usleep(20_000) }
        }
        guard let port else {
            process.terminate()
            throw TestSyncServerError("the server did not start: \(printed.text.withLock { $0 })")
        }
        (self.process, self.printed, self.port) = (process, printed, port)
    }

    /// Whether the server process is still running.
    public var isRunning: Bool { process.isRunning }

    /// The port of its metrics endpoint, when it was started with `--metrics 127.0.0.1:0`.
    public var metricsPort: Int? { printed.text.withLock { Self.port(in: $0, after: "metrics on 127.0.0.1:") } }

    /// Stops the server (SIGTERM, or SIGKILL when `kill` is true) and waits for it.
    public func stop(kill: Bool = false) {
        guard process.isRunning else { return }
        if kill { Foundation.kill(process.processIdentifier, SIGKILL) } else { process.terminate() }
        process.waitUntilExit()
    }

    /// Sends SIGTERM and waits up to `limit` for the server to exit: how long it took and its
    /// exit status, or nil when it was still running (it is then killed).
    public func terminate(within limit: Duration) -> (took: Duration, status: Int32)? {
        let start = ContinuousClock.now
        process.terminate()
        while process.isRunning, ContinuousClock.now - start < limit { usleep(10_000) }
        let took = ContinuousClock.now - start
        guard !process.isRunning else {
            stop(kill: true)
            return nil
        }
        return (took, process.terminationStatus)
    }

    deinit { stop(kill: true) }

    /// Runs the server with `arguments` to its exit (for arguments it refuses); status and output.
    public static func runToExit(_ arguments: [String], timeout: TimeInterval = 30) throws -> (status: Int32, output: String) {
        let process = Process(), pipe = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    private static func port(in text: String, after marker: String = "listening on 127.0.0.1:") -> Int? {
        guard let range = text.range(of: "keyhaven-sync-server: " + marker) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
}

/// What a server printed, filled in as it prints.
final class Printed: Sendable {
    let text = Mutex("")
}

public struct TestSyncServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
