#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Whole writes and reads on a blocking stream socket, for both ends of the agent's connections.
package enum SocketIO {
    /// Sends all of `bytes` (no SIGPIPE); nil, or the error's text when the connection broke.
    package static func send(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }

    /// Reads exactly `count` bytes; nil when the connection ends (or breaks) first. With a `step`,
    /// memory is taken as the bytes come, at most `step` bytes ahead: a peer that announces a
    /// large frame and sends nothing holds only `step` bytes. The buffers outgrown are freed
    /// unwiped, so a step is for a process whose freed memory is overwritten (the agent's).
    package static func receive(_ fd: Int32, count: Int, step: Int = .max) -> [UInt8]? {
        var buffer: [UInt8] = []
        var offset = 0
        while offset < count {
            if offset == buffer.count { buffer.append(contentsOf: repeatElement(0, count: min(step, count - offset))) }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                zeroize(&buffer)
                return nil
            }
            offset += n
        }
        return buffer
    }
}
