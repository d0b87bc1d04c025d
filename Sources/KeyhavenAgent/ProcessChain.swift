#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// A process and its parents as a prompt names them: "ssh (1234) ← git ← bash", read from
/// /proc (each process's `comm` and parent), at most four deep and stopping at pid 1.
///
/// The names are what each process calls itself, which it can change: the prompt's program is
/// the verified client's, and the parents only say how the user got there.
struct ProcessChain: Sendable, CustomStringConvertible {
    let pid: Int32

    var description: String {
        var parts: [String] = []
        var current = pid
        for depth in 0..<4 {
            guard current > 1, let (name, parent) = Self.status(of: current) else { break }
            parts.append(depth == 0 ? "\(name) (\(current))" : name)
            current = parent
        }
        return parts.isEmpty ? "process \(pid)" : parts.joined(separator: " ← ")
    }

    /// The `comm` and parent pid from /proc/PID/stat ("pid (comm) state ppid ...": the name may
    /// hold spaces and parentheses, so the last ")" ends it).
    private static func status(of pid: Int32) -> (String, Int32)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let name = String(text[text.index(after: open)..<close]).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count >= 2, let parent = Int32(fields[1]) else { return nil }
        return (String(String.UnicodeScalarView(name)), parent)
    }
}
