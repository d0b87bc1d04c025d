#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `struct ucred` (Linux's SO_PEERCRED answer), declared here because Glibc's module leaves it
/// behind `_GNU_SOURCE`. Same layout: pid, uid, gid.
package struct PeerCredentials: Sendable {
    package var pid: Int32 = 0
    package var uid: UInt32 = 0
    package var gid: UInt32 = 0

    package init() {}

    /// SO_PEERCRED.
    package static let option: Int32 = 17

    /// The credentials of the process at the other end of a connected Unix socket.
    package init?(socket fd: Int32) {
        var credentials = PeerCredentials()
        var size = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, Self.option, &credentials, &size) == 0 else { return nil }
        self = credentials
    }
}
