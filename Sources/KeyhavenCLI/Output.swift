#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a line to standard output or standard error, unbuffered.
package func printLine(_ line: String, to fd: Int32 = 1) {
    writeStandardOutput(Array((line + "\n").utf8), to: fd)
}

/// Writes bytes as they are to standard output (or `fd`), unbuffered.
package func writeStandardOutput(_ bytes: [UInt8], to fd: Int32 = 1) {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { return }
        offset += n
    }
}

package func printError(_ line: String) { printLine(line, to: 2) }
