#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds the descriptor of a socket of this process by the socket's cookie (`SO_COOKIE`, unique
/// for the socket's life): SwiftNIO does not give its channels' descriptors, and ``Wakefulness``
/// polls them. Read-only: `getsockopt` on each descriptor in `/proc/self/fd`.
package enum SocketDescriptor {
    /// `SO_COOKIE` (Linux 4.12+).
    package static let cookieOption: Int32 = 57

    /// The descriptor whose socket has `cookie`, or nil (no `/proc`, or not found).
    package static func find(cookie: UInt64) -> Int32? {
        guard let folder = opendir("/proc/self/fd") else { return nil }
        defer { closedir(folder) }
        let own = dirfd(folder)
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd != own, Self.cookie(of: fd) == cookie else { continue }
            return fd
        }
        return nil
    }

    /// The cookie of the socket `fd`, or nil when it is not a socket.
    package static func cookie(of fd: Int32) -> UInt64? {
        var value: UInt64 = 0
        var length = socklen_t(MemoryLayout<UInt64>.size)
        guard getsockopt(fd, SOL_SOCKET, cookieOption, &value, &length) == 0, length == MemoryLayout<UInt64>.size else { return nil }
        return value
    }
}
