#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import FoundationEssentials
import KeychainStore

/// Who holds the client's end of a connection (docs/access.md, "Which program is asking").
///
/// The kernel says which process connected (SO_PEERCRED), not which processes can write on the
/// connection: a program can connect, fork, and run a trusted program in its place (execve), and
/// its child then writes on the inherited socket. So at accept the agent looks for the client's
/// end of the socket (its inode, from the kernel's sock_diag interface) among the descriptors of
/// the user's processes. The connection is suspect unless:
///
/// - the process that connected holds it, close-on-exec (as the library opens it: a descriptor
///   kept across execve is one that a program it ran may write on);
/// - every other process that holds it runs the same executable (a fork of the program, before
///   it runs anything else).
///
/// A descriptor in flight (sent with SCM_RIGHTS and not yet received) is held by no process at
/// that moment; docs/threat-model.md says so.
package enum ConnectionHolders {
    /// Why the connection on `socket` (the agent's end) is suspect for `client`; nil when it is not.
    package static func suspicion(socket: Int32, client: ClientProcess) -> String? {
        let peer = kh_unix_peer_inode(socket)
        guard peer > 0 else { return "the kernel does not say which socket is the client's" }
        let inode = UInt64(peer)
        guard let executable = client.pinnedExecutable else { return "the client's executable could not be pinned" }
        let own = descriptors(of: client.pid, naming: inode)
        guard !own.isEmpty else { return "the process that connected does not hold the connection" }
        for descriptor in own where !isCloseOnExec(pid: client.pid, descriptor: descriptor) {
            return "the connection is kept across execve (descriptor \(descriptor) is not close-on-exec)"
        }
        var pids = [Int32](repeating: 0, count: 16)
        let count = kh_socket_holders(inode, client.pid, getuid(), &pids, Int32(pids.count))
        guard count >= 0 else { return "/proc cannot be read" }
        guard count <= Int32(pids.count) else { return "more than \(pids.count) processes hold the connection" }
        // Each holder, found holding it just now, runs the same executable or is a fork of the
        // client running another program, which holds the descriptor until execve closes it (the
        // kernel names the new executable a moment before): asked again shortly.
        var others = pids.prefix(Int(count)).filter { !runs(executable, $0) }
        for _ in 0..<3 where !others.isEmpty {
            usleep(2_000)
            others = others.filter { !descriptors(of: $0, naming: inode).isEmpty && !runs(executable, $0) }
        }
        return others.first.map { "another process (\($0)), running another program, holds the connection" }
    }

    /// Whether `pid` runs `executable`.
    private static func runs(_ executable: MappedCode.FileID, _ pid: Int32) -> Bool {
        var running = stat()
        return stat("/proc/\(pid)/exe", &running) == 0 && MappedCode.FileID(running) == executable
    }

    /// The descriptors of `pid` that are the socket with inode `inode`.
    static func descriptors(of pid: Int32, naming inode: UInt64) -> [Int32] {
        var fds = [Int32](repeating: 0, count: 64)
        let count = kh_descriptors_naming(pid, inode, &fds, Int32(fds.count))
        return Array(fds.prefix(Int(max(0, count))))
    }

    /// Whether descriptor `descriptor` of `pid` is close-on-exec (`flags:` in its fdinfo, octal).
    static func isCloseOnExec(pid: Int32, descriptor: Int32) -> Bool {
        guard let bytes = ProcessFile.read("/proc/\(pid)/fdinfo/\(descriptor)") else { return false }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("flags:".utf8)) {
            let value = String(decoding: line.dropFirst(6).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }, as: UTF8.self)
            guard let flags = Int(value, radix: 8) else { return false }
            return flags & Int(O_CLOEXEC) != 0
        }
        return false
    }
}
