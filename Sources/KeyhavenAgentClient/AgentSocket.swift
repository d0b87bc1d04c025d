#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel

/// Where the agent listens: `$KEYHAVEN_AGENT_SOCKET`, else `$XDG_RUNTIME_DIR/keyhaven/agent.sock`,
/// else `/tmp/keyhaven-<uid>/agent.sock`. The folder is 0700, the socket 0600.
///
/// A socket in a shared folder such as `/tmp` could be put there by anyone, so neither side takes
/// the path on trust (as ssh-agent and gpg-agent do not): the client connects only through a
/// folder that is this user's own (``verifyFolder()``) and then checks the peer's uid with
/// `SO_PEERCRED`; the agent makes its folder without following links and refuses one that is
/// someone else's (``preparePrivateFolder()``).
package struct AgentSocket: Sendable, Hashable {
    package let path: String

    package init(path: String) { self.path = path }

    package static func current() -> AgentSocket {
        func variable(_ name: String) -> String? { environmentVariable(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let explicit = variable("KEYHAVEN_AGENT_SOCKET") { return AgentSocket(path: explicit) }
        if let runtime = variable("XDG_RUNTIME_DIR") { return AgentSocket(path: runtime + "/keyhaven/agent.sock") }
        return AgentSocket(path: "/tmp/keyhaven-\(getuid())/agent.sock")
    }

    package var folder: String { parentFolder(of: path) }
    /// The file whose lock says an agent owns this socket.
    package var lockPath: String { path + ".lock" }

    /// Checks, without following links, that the socket's folder is a folder of this user that no
    /// other user can enter: `.notAvailable` otherwise, before a byte is sent. (A folder in
    /// `/tmp` made by another user, with a listener in it, would otherwise receive the secrets
    /// of every request.)
    package func verifyFolder() throws(StoreError) {
        var info = stat()
        guard lstat(folder.isEmpty ? "." : folder, &info) == 0 else {
            throw StoreError(.notAvailable, "no agent at \(path) (\(String(cString: strerror(errno))))")
        }
        if let problem = Self.problem(with: info) {
            throw StoreError(.notAvailable, "refusing the agent socket \(path): its folder \(problem)")
        }
    }

    /// Makes the socket's folder (and missing parents) 0700 for the agent, never following a
    /// link; refuses an existing folder that is a link, not a folder, another user's, or open to
    /// other users (a folder others could write to may hold what they put there).
    package func preparePrivateFolder() throws(StoreError) {
        let folder = self.folder.isEmpty ? "." : self.folder
        var info = stat()
        if lstat(folder, &info) != 0 {
            guard errno == ENOENT else { throw FileSecurity.error(errno, "cannot read the folder \(folder)") }
            try FileSecurity.createMissingPrivateDirectories(folder)
            guard lstat(folder, &info) == 0 else { throw FileSecurity.error(errno, "cannot read the folder \(folder)") }
        }
        if let problem = Self.problem(with: info) {
            throw StoreError(.notAvailable, "refusing to serve at \(path): the folder \(problem); remove it and start again")
        }
    }

    /// The socket address of `path`; `.invalidParameter` when the path is too long for one.
    package static func address(_ path: String) throws(StoreError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw StoreError(.invalidParameter, "the agent socket path is too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
            raw[bytes.count] = 0
        }
        return address
    }

    /// Calls `body` with `address` as a `sockaddr` and its length (for `connect` and `bind`).
    package static func withAddress<T>(_ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    }

    /// What is wrong with a folder for the agent's socket, or nil.
    private static func problem(with info: stat) -> String? {
        let kind = info.st_mode & S_IFMT
        if kind == S_IFLNK { return "is a symbolic link" }
        if kind != S_IFDIR { return "is not a folder" }
        if info.st_uid != getuid() { return "belongs to uid \(info.st_uid), not to this user (uid \(getuid()))" }
        if info.st_mode & 0o077 != 0 { return "is open to other users (mode \(String(info.st_mode & 0o777, radix: 8)))" }
        return nil
    }
}
