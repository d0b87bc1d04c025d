#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file descriptor that came with a message (`h`): this process's own duplicate, closed when the
/// last reference goes, so it outlives the message it arrived in.
package final class BusFileDescriptor: Sendable, Equatable {
    package let fd: Int32

    /// Takes a duplicate of `fd` (close-on-exec); nil when it cannot be duplicated.
    package init?(duplicating fd: Int32) {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { return nil }
        self.fd = copy
    }

    deinit { close(fd) }

    package static func == (lhs: BusFileDescriptor, rhs: BusFileDescriptor) -> Bool { lhs === rhs }
}
