#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// One run of a keyhaven program beside this one (`keyhaven sync ...`), to its end: its exit
/// status and what it wrote. Its output is small (a status, a device list).
package struct ToolRun: Sendable {
    package let status: Int32
    package let output: String
    package let error: String

    /// The program `name` in this program's folder (where scripts/install puts them all).
    package static func sibling(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/usr/local/bin/keyhaven-access"
        return String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)]) + "/" + name
    }

    /// Runs `program` with `arguments`; `environment` nil: this process's own.
    package static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) throws(StoreError) -> ToolRun {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard pipe(&out) == 0 else { throw StoreError(.notAvailable, "no pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&err) == 0 else {
            close(out[0]); close(out[1])
            throw StoreError(.notAvailable, "no pipe: \(String(cString: strerror(errno)))")
        }
        // Not inherited by anything else this program starts meanwhile (the window's thread).
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0.key + "=" + $0.value) } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid = pid_t()
        let result = envp.map { posix_spawn(&pid, program, &actions, nil, argv, $0) } ?? posix_spawn(&pid, program, &actions, nil, argv, environ)
        close(out[1]); close(err[1])
        defer { close(out[0]); close(err[0]) }
        guard result == 0 else { throw StoreError(.notAvailable, "cannot run \(program): \(String(cString: strerror(result)))") }
        let output = readAll(out[0]), error = readAll(err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ToolRun(status: exit, output: String(decoding: output, as: UTF8.self), error: String(decoding: error, as: UTF8.self))
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 { bytes += buffer[..<count]; continue }
            if count < 0 && errno == EINTR { continue }
            return bytes
        }
    }
}
