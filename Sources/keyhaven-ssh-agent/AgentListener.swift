#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import KeyhavenAgentClient

/// The socket `ssh` and `ssh-add` connect to: the path `-a` gives, or `agent.PID` in a new 0700
/// folder under /tmp, as OpenSSH's agent makes it. The socket file is 0600.
struct AgentListener: Sendable {
    let fd: Int32
    let path: String
    /// The folder this agent made for the socket, removed with it.
    let madeFolder: String?

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

    /// Removes the socket (and the folder made for it).
    func remove() {
        unlink(path)
        if let madeFolder { rmdir(madeFolder) }
    }
}
