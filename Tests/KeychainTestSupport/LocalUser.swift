import Foundation
import Testing

/// A second (or third) local user for tests that play one user against another: created with
/// `useradd` when the tests run as root (a system account without a home or a login shell, kept
/// for later runs), and run as with `setpriv`. Tests that need one are enabled only as root
/// (``LocalUser/isAvailable``) and say so when they skip.
public struct LocalUser: Sendable {
    public let name: String
    public let uid: UInt32
    public let gid: UInt32

    /// Why two-user tests skip when not run as root.
    public static let skipReason: Comment = "needs root to create a second local user (useradd) and run as it (setpriv); run the tests as root to include it"

    /// Creating users and switching to them needs root.
    public static var isAvailable: Bool { getuid() == 0 }

    /// The user `name`, created if it does not exist yet.
    public static func make(_ name: String) throws -> LocalUser {
        if getpwnam(name) == nil {
            let status = try Shell.run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
            guard status == 0 || getpwnam(name) != nil else { throw CocoaError(.executableLoad) }
        }
        guard let entry = getpwnam(name) else { throw CocoaError(.executableLoad) }
        return LocalUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// A process that runs `executable` as this user (not yet started), with exactly `environment`.
    public func process(_ executable: String, _ arguments: [String], environment: [String: String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", executable] + arguments
        process.environment = environment
        return process
    }

    /// Runs `executable` as this user to its end: its status and what it printed.
    public func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String, error: String) {
        let process = self.process(executable, arguments, environment: environment)
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
    }

    /// A new empty folder owned by this user (0700), for its keychain home.
    public func makeFolder(prefix: String) throws -> String {
        let folder = try TemporaryFolder.make(prefix: prefix)
        guard chown(folder, uid, gid) == 0 else { throw CocoaError(.fileWriteNoPermission) }
        return folder
    }
}

/// The built executables, copied into a folder every user can enter: the build folder may sit
/// below one only root can (a CI clone in a private temporary folder).
public struct SharedExecutables: Sendable {
    public let folder: String

    public init(_ names: [String]) throws {
        folder = try TemporaryFolder.make(prefix: "keyhaven-bin")
        chmod(folder, 0o755)
        let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for name in names {
            try ExecutableFile.copy(products.appendingPathComponent(name).path, to: folder + "/" + name)
        }
    }

    public func path(_ name: String) -> String { folder + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: folder) }
}

/// Runs a system command as the current user.
public enum Shell {
    /// Runs `executable` to its end with `input` on its standard input (and `environment`, when
    /// given, instead of this process's); its exit status.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: String = "",
                           environment: [String: String]? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs a command that leaves a daemon behind (`pg_ctl start`) and waits for the command only,
    /// with /dev/null for its standard streams. Foundation's `Process` learns of an exit when a
    /// socket its child inherits closes, which a daemon keeps open for good: `run` would wait for
    /// the daemon. This spawns and waits with `waitpid` instead.
    @discardableResult
    public static func runLeavingDaemon(_ executable: String, _ arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else: the daemon must not keep another test's Process watch socket (or pipe) open.
        closeFrom(3, in: &actions)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw ShellError(executable: executable, code: spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

extension Shell {
    /// Adds "close every descriptor from `first` on" to `actions`: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later, not in Swift's Glibc module, so
    /// looked up), else a close for each possible descriptor (glibc skips those not open).
    static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil /* RTLD_DEFAULT */, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
            return
        }
        for descriptor in first..<min(Int32(sysconf(Int32(_SC_OPEN_MAX))), 65_536) {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
}

/// A command that could not be started.
public struct ShellError: Error, CustomStringConvertible {
    public let executable: String
    public let code: Int32
    public var description: String { "\(executable) could not be started (errno \(code))" }
}

/// A user's own keychain home and runtime folder (new, temporary, the user's), with the built
/// executables where the user can run them: what a test needs to run `keyhaven` as that user.
public struct UserKeychainSession: Sendable {
    public let user: LocalUser
    public let binaries: SharedExecutables
    public let home: String
    public let runtime: String

    public init(_ user: LocalUser, executables: [String] = ["keyhaven", "keyhavend"]) throws {
        self.user = user
        binaries = try SharedExecutables(executables)
        home = try user.makeFolder(prefix: "keyhaven-\(user.name)-home")
        runtime = try user.makeFolder(prefix: "keyhaven-\(user.name)-run")
    }

    /// The user's environment: this session's keychain home and runtime folder.
    public var environment: [String: String] {
        ["KEYHAVEN_HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin", "HOME": home]
    }

    /// Runs the built `keyhaven` as the user.
    public func keyhaven(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
        try user.run(binaries.path("keyhaven"), arguments, environment: environment)
    }

    /// Stops the user's agent and removes the folders and the copied executables.
    public func remove() {
        _ = try? keyhaven("agent", "stop")
        binaries.remove()
        try? FileManager.default.removeItem(atPath: home)
        try? FileManager.default.removeItem(atPath: runtime)
    }
}
