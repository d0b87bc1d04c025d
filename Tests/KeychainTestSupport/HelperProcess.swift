import Foundation

/// `keyhaven-test-helper`, run in the current test's keychain home (see its main.swift for the
/// modes).
public enum HelperProcess {
    /// The build folder holding the test binary and the helper.
    public static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyhaven-test-helper")
    }

    /// Starts the helper with `arguments`, with `changes` made to the environment (nil removes a
    /// variable); its standard output is the returned pipe.
    public static func start(_ arguments: [String], environment changes: [String: String?] = [:]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = TestHome.current!.path
        for (name, value) in changes { environment[name] = value }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Reads the helper's output until it holds `text` or the helper exits; what was read, which
    /// `finish` no longer returns.
    public static func read(_ started: (Process, Pipe), until text: String) -> String {
        var heard = Data()
        while !String(decoding: heard, as: UTF8.self).contains(text) {
            let chunk = started.1.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            heard.append(chunk)
        }
        return String(decoding: heard, as: UTF8.self)
    }

    /// Waits for the helper; its exit status and everything it printed, trimmed.
    public static func finish(_ started: (Process, Pipe)) -> (Int32, String) {
        let data = started.1.fileHandleForReading.readDataToEndOfFile()
        started.0.waitUntilExit()
        return (started.0.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
