import Foundation
import KeychainServicesExtras
import KeychainStore
import Testing

/// The keychain home of the running test.
public struct TestHome: Sendable {
    /// The folder `KEYHAVEN_HOME` points at for this test.
    public let path: String
    /// The default keychain file in it.
    public var keychainPath: String { path + "/login.keychain-db" }

    /// The home of the test that is running now.
    @TaskLocal public static var current: TestHome?
}

/// Gives every test it applies to a fresh, empty keychain home and runs tests one at a time.
///
/// `KEYHAVEN_HOME` and the access-group list are process-wide, and every test target runs in one
/// process, so tests that use them must not overlap: a process-wide lock serializes them. The
/// home is a new temporary folder, removed afterwards; no test ever sees a real keychain.
public struct FreshKeychainTrait: TestTrait, SuiteTrait, TestScoping {
    public let accessGroups: [String]
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard !test.isSuite else { return try await function() }
        await TestLock.shared.acquire()
        defer { Task { await TestLock.shared.release() } }
        let home = try TemporaryFolder.make(prefix: "keyhaven-test")
        setenv("KEYHAVEN_HOME", home, 1)
        KeychainRegistry.shared.closeAll()
        SecAccessGroupsSetCurrent(NSArray(array: accessGroups))
        // Keychain passwords get cheap scrypt parameters in tests (2^10, not the calibrated
        // quarter second); one test checks the real calibration.
        PasswordKDF.testingLogN = 10
        // Library calls go through an agent only when the run asks for it (the conformance suite
        // runs once each way); never through whatever agent this machine happens to run.
        let agent = try TestAgent.startIfRequested(home: home)
        defer {
            agent?.stop()
            PasswordKDF.testingLogN = nil
            KeychainRegistry.shared.closeAll()
            try? FileManager.default.removeItem(atPath: home)
        }
        try await TestHome.$current.withValue(TestHome(path: home)) { try await function() }
    }
}

extension Trait where Self == FreshKeychainTrait {
    /// A fresh keychain home for each test, with the given access groups (first = default).
    public static func freshKeychain(accessGroups: [String] = ["test.group.a", "test.group.b"]) -> Self {
        FreshKeychainTrait(accessGroups: accessGroups)
    }
}

/// The lock ``FreshKeychainTrait`` holds around each test, for a test of another kind that uses
/// process-wide state too (SQLite fault injection): nothing with a fresh keychain runs meanwhile.
public enum ProcessWideTestLock {
    public static func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await TestLock.shared.acquire()
        do {
            let result = try await body()
            await TestLock.shared.release()
            return result
        } catch {
            await TestLock.shared.release()
            throw error
        }
    }
}

/// A lock that suspends instead of blocking a thread.
actor TestLock {
    static let shared = TestLock()
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !held { held = true; return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }
}

/// Temporary folders made with mkdtemp (0700).
public enum TemporaryFolder {
    public static func make(prefix: String) throws -> String {
        var template = Array((NSTemporaryDirectory() + "/\(prefix).XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        return String(cString: made)
    }
}

/// A private keyhavend for one test, when `KEYHAVEN_TEST_BACKEND=agent`: its own runtime folder,
/// the test's keychain home, and `KEYHAVEN_AGENT=on` so that every library call goes through it.
public final class TestAgent: Sendable {
    private let process: Process
    public let runtime: String

    private init(process: Process, runtime: String) {
        self.process = process
        self.runtime = runtime
    }

    /// Whether this run sends library calls through the agent.
    public static var isRequested: Bool { ProcessInfo.processInfo.environment["KEYHAVEN_TEST_BACKEND"] == "agent" }

    static func startIfRequested(home: String) throws -> TestAgent? {
        guard isRequested else {
            setenv("KEYHAVEN_AGENT", "off", 1)
            return nil
        }
        return try start()
    }

    /// A private keyhavend for the running test's keychain home, whatever the run asked for, with
    /// `extraEnvironment` (a test's `KEYHAVEN_TPM`); library calls go through it until ``stop()``.
    public static func start(extraEnvironment: [String: String] = [:]) throws -> TestAgent {
        let runtime = try TemporaryFolder.make(prefix: "keyhaven-agent")
        setenv("XDG_RUNTIME_DIR", runtime, 1)
        unsetenv("KEYHAVEN_AGENT_SOCKET")
        setenv("KEYHAVEN_AGENT", "on", 1)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyhavend")
        process.environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let socket = runtime + "/keyhaven/agent.sock"
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
        // The conformance suite plays many applications' access groups: the agent grants them to
        // this test program as a user would, with `keyhaven access grant -G '*'`.
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let grant = Process()
        grant.executableURL = folder.appendingPathComponent("keyhaven")
        grant.arguments = ["access", "grant", "-T", URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, "-G", "*"]
        grant.environment = ProcessInfo.processInfo.environment
        grant.standardOutput = FileHandle.nullDevice
        try grant.run()
        grant.waitUntilExit()
        return TestAgent(process: process, runtime: runtime)
    }

    /// Stops the agent; library calls then open keychains in the test process again.
    public func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: runtime)
        if !Self.isRequested { setenv("KEYHAVEN_AGENT", "off", 1) }
    }
}
