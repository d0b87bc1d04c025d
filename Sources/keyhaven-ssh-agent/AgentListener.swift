#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import KeyhavenAgentClient

/// The socket `ssh` and `ssh-add` connect to: the one systemd passes (socket activation), the
/// path `-a` gives, or `agent.PID` in a new 0700 folder under /tmp, as OpenSSH's agent makes it.
/// A socket file the agent makes is 0600.
struct AgentListener: Sendable {
    let fd: Int32
    let path: String
    /// The folder this agent made for the socket, removed with it.
    let madeFolder: String?
    /// Whether the agent made the socket file (and removes it): not when systemd passed it.
    var ownsPath = true

    /// The listening socket systemd passed (sd_listen_fds(3): `LISTEN_PID` is this process,
    /// `LISTEN_FDS` is 1, the socket is descriptor 3); nil when none was passed. The variables
    /// are cleared, so that a command the agent runs does not take the socket for its own.
    static func passed() throws(StoreError) -> AgentListener? {
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid() else { return nil }
        let count = getenv("LISTEN_FDS").flatMap { Int(String(cString: $0)) } ?? 0
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        guard count == 1 else { throw StoreError(.invalidParameter, "systemd passed \(count) sockets; the SSH agent listens on one") }
        let fd: Int32 = 3
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        var listening: Int32 = 0
        var optionLength = socklen_t(MemoryLayout<Int32>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX),
              getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optionLength) == 0, listening != 0 else {
            throw StoreError(.invalidParameter, "the descriptor systemd passed is not a listening Unix socket")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let path = withUnsafeBytes(of: address.sun_path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var listener = AgentListener(fd: fd, path: path, madeFolder: nil)
        listener.ownsPath = false
        return listener
    }

    private init(fd: Int32, path: String, madeFolder: String?) {
        (self.fd, self.path, self.madeFolder) = (fd, path, madeFolder)
    }

    init(path requested: String?) throws(StoreError) {
        var folder: String?
        let path: String
        if let requested {
            path = requested
        } else {
            var template = Array("/tmp/ssh-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw StoreError(.notAvailable, "mkdtemp: private socket dir: \(String(cString: strerror(errno)))")
            }
            folder = String(cString: made)
            path = folder! + "/agent.\(getpid())"
        }
        let address = try AgentSocket.address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StoreError(.notAvailable, "socket: \(String(cString: strerror(errno)))") }
        let previousMask = umask(0o177)
        let bound = AgentSocket.withAddress(address) { bind(fd, $0, $1) }
        umask(previousMask)
        guard bound == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            if let folder { rmdir(folder) }
            throw StoreError(.notAvailable, "bind \(path): \(reason)")
        }
        (self.fd, self.path, madeFolder) = (fd, path, folder)
    }

    /// Removes the socket (and the folder made for it), when the agent made it.
    func remove() {
        guard ownsPath else { return }
        unlink(path)
        if let madeFolder { rmdir(madeFolder) }
    }
}
