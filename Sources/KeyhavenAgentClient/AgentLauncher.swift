#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// glibc's POSIX_SPAWN_SETSID (hidden behind _GNU_SOURCE in the Glibc module): start the child in
/// a new session, so it outlives the command and its terminal.
private let posixSpawnSetSID: Int32 = 0x80

/// Connects to the agent, starting one (like gpg-agent) when none answers.
package enum AgentLauncher {
    /// A client of the agent for `home`; `.notAvailable` if the agent there serves another home.
    package static func connect(home: KeychainHome, start: Bool = true) throws(StoreError) -> AgentClient {
        let socket = AgentSocket.current()
        // Every request names the home, so an agent of another home answers with an error that
        // says so; no separate check is needed.
        if let client = try? AgentClient(socket: socket, home: home.path) { return client }
        // A socket folder that is not this user's own is refused, not worked around: an agent
        // started now would refuse it too. (A missing folder is made by the agent.)
        var info = stat()
        if lstat(socket.folder, &info) == 0 { try socket.verifyFolder() }
        guard start else { throw StoreError(.notAvailable, "no agent is running at \(socket.path)") }
        try spawnAgent()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while clock.now < deadline {
            if let client = try? AgentClient(socket: socket, home: home.path) { return client }
            usleep(5_000)
        }
        throw StoreError(.notAvailable, "keyhavend did not start; run it by hand to see why")
    }

    /// Waits until the process `pid` has exited (gone, or a zombie no one has reaped yet); false
    /// if it still runs after `limit`.
    package static func waitForExit(_ pid: Int32, within limit: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while clock.now < deadline {
            guard kill(pid, 0) == 0 else { return errno == ESRCH }
            // /proc/PID/stat: "PID (NAME) STATE ...", the state after the last ')'.
            if let stat = try? FileSecurity.readSmallFile("/proc/\(pid)/stat", maximum: 4096),
               let close = stat.lastIndex(of: UInt8(ascii: ")")), stat.index(close, offsetBy: 2) < stat.endIndex,
               stat[stat.index(close, offsetBy: 2)] == UInt8(ascii: "Z") {
                return true
            }
            usleep(10_000)
        }
        return false
    }

    /// The agent executable: beside this one, else `keyhavend` on the PATH.
    package static var agentExecutable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 {
            let beside = parentFolder(of: String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)) + "/keyhavend"
            if access(beside, X_OK) == 0 { return beside }
        }
        return "keyhavend"
    }

    /// Marks every descriptor of this process beyond 0-2 close-on-exec, so the agent inherits
    /// none (an inherited pipe of whoever ran this command would never see end-of-file).
    private static func closeOnExec() {
        guard let folder = opendir("/proc/self/fd") else { return }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if let fd = Int32(name), fd > 2 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
    }

    /// Starts `keyhavend` in its own session, detached, with its output going nowhere.
    private static func spawnAgent() throws(StoreError) {
        closeOnExec()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(posixSpawnSetSID))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in [0, 1, 2] as [Int32] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let executable = agentExecutable
        var pid = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), nil]
        defer { argv.forEach { free($0) } }
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw StoreError(.notAvailable, "cannot start \(executable): \(String(cString: strerror(result)))")
        }
    }
}
