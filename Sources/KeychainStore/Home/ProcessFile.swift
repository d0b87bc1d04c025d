#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Reads what the kernel says of another process (`/proc/PID/...`): files that have no size to
/// ask for, read to their end.
package enum ProcessFile {
    /// The file's contents: its first MiB (`whole`: all of it, nil past 64 MiB, so that a list of
    /// mappings is never judged by its start); nil when it cannot be opened or read. `flags` are
    /// added to `open`'s (`O_NOFOLLOW`).
    package static func read(_ path: String, whole: Bool = false, flags: Int32 = 0) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | flags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = System.read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            if bytes.count > (whole ? 64 : 1) << 20 { return whole ? nil : bytes }
        }
    }
}
