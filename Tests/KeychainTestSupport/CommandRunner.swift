import Foundation

/// Runs the built `keyhaven` in the test's keychain home, with its own runtime folder (so its
/// agent is the test's own), and collects what it printed.
public struct CommandRunner: Sendable {
    public let runtime: String
    /// More for the command and for the agent it starts (the agent keeps the environment of the
    /// command that started it).
    public var extraEnvironment: [String: String] = [:]
    /// The ordinary user the commands (and the agent they start) run as, in that user's own
    /// keychain home, with the executables where the user can run them; nil: as the test.
    public let user: UserKeychainSession?

    public static var products: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public init() throws {
        runtime = try TemporaryFolder.make(prefix: "keyhaven-runtime")
        user = nil
    }

    /// A runner whose commands run as `session`'s user, in its home and runtime folder.
    public init(as session: UserKeychainSession) {
        runtime = session.runtime
        user = session
    }

    public struct Result: Sendable {
        public let status: Int32
        public let output: String
        public let error: String
        /// It exited (rather than dying of a signal).
        public var exited = true
    }

    public var environment: [String: String] {
        var environment = user?.environment ?? ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = user?.home ?? TestHome.current!.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["KEYHAVEN_AGENT_SOCKET"] = nil
        environment["KEYHAVEN_ACCESS_GROUPS"] = nil
        environment.merge(extraEnvironment) { _, new in new }
        return environment
    }

    @discardableResult
    public func run(_ arguments: String..., input: String? = nil) throws -> Result {
        try run(arguments, input: input)
    }

    public func run(_ arguments: [String], input: String? = nil) throws -> Result {
        guard let user else {
            return try Self.execute(Self.products.appendingPathComponent("keyhaven").path, arguments, environment: environment, input: input)
        }
        return try Self.execute(user.binaries.path("keyhaven"), arguments, environment: environment, input: input, as: user.user)
    }

    /// Runs any program (as `user`, when given); `input` on its standard input (closed after).
    public static func execute(_ program: String, _ arguments: [String], environment: [String: String], input: String? = nil,
                               as user: LocalUser? = nil) throws -> Result {
        let process: Process
        if let user {
            process = user.process(program, arguments, environment: environment)
        } else {
            process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.environment = environment
        }
        let (out, err, inp) = (Pipe(), Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        // The test's thread (a Dispatch worker) blocks most signals, and a spawned program inherits
        // that mask: dbus-run-session's bus would then ignore the SIGTERM that ends it, and keep
        // the pipes open. Spawn with nothing blocked.
        var clear = sigset_t(), previous = sigset_t()
        sigemptyset(&clear)
        pthread_sigmask(SIG_SETMASK, &clear, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try? inp.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                      error: String(decoding: error, as: UTF8.self), exited: process.terminationReason == .exit)
    }

    /// Stops this runner's agent and removes its runtime folder (a user's session is its own to remove).
    public func finish() {
        _ = try? run("agent", "stop")
        if user == nil { try? FileManager.default.removeItem(atPath: runtime) }
    }
}
