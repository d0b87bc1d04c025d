#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Whole writes on a blocking stream socket, for both ends of the agent's connections (reads:
/// ``FrameReader``).
package enum SocketIO {
    /// Sends all of `bytes` (no SIGPIPE); nil, or the error's text when the connection broke.
    package static func send(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { System.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }
}
