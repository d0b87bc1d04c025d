#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// What per-application access cannot stop on this machine, said where the user decides whom to
/// trust (docs/threat-model.md, "Programs of the same user").
enum AccessLimits {
    /// `kernel.yama.ptrace_scope`: nil when the kernel has no Yama (any process may trace any
    /// other of the same user).
    static func ptraceScope(_ path: String = "/proc/sys/kernel/yama/ptrace_scope") -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.filter { !$0.isWhitespace })
    }

    /// What the running kernel lets a program of the user do to another, and what to do about it.
    static func kernelReport(scope: Int?) -> [String] {
        let allows: String
        switch scope {
        case nil:
            allows = "this kernel has no Yama (kernel.yama.ptrace_scope is absent): any program of yours may trace any other "
                + "program of yours and write code into it (ptrace, process_vm_writev), and then ask in its name"
        case 0?:
            allows = "kernel.yama.ptrace_scope is 0: any program of yours may trace any other program of yours and write "
                + "code into it (ptrace, process_vm_writev), and then ask in its name"
        case 1?:
            allows = "kernel.yama.ptrace_scope is 1: a program of yours may trace the programs it starts (its descendants) "
                + "and write code into them (ptrace, process_vm_writev), and then ask in their name"
        case 2?:
            allows = "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE (root) may trace another: "
                + "no program of yours can write code into another"
        default:
            allows = "kernel.yama.ptrace_scope is \(scope!): no process may trace another: no program of yours can write code into another"
        }
        var lines = ["What the kernel allows: \(allows).",
                     "The agent refuses a client it sees traced, and one whose mapped code is not its program's own; a "
                     + "tracer that writes code and detaches between two readings is not seen."]
        if (scope ?? 0) < 2 {
            lines.append("What you can do: set kernel.yama.ptrace_scope to 2 or 3 (sysctl -w kernel.yama.ptrace_scope=2, "
                         + "as root; a file in /etc/sysctl.d keeps it), on a kernel with Yama. Sandboxed (Flatpak) apps "
                         + "cannot trace other programs.")
        }
        return lines
    }

    /// The first folder above `program` (its own folder first) that this user can write, where a
    /// library or a program put beside it would run as it; nil when there is none, or the user
    /// is root (who can write every folder).
    static func writableFolder(above program: String) -> String? {
        guard getuid() != 0, program.hasPrefix("/") else { return nil }
        var folder = String(program[..<(program.lastIndex(of: "/") ?? program.startIndex)])
        while true {
            let current = folder.isEmpty ? "/" : folder
            var info = stat()
            if lstat(current, &info) == 0 && (info.st_uid == getuid() || access(current, W_OK) == 0) { return current }
            if current == "/" { return nil }
            folder = String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
        }
    }

    /// The warning for a trusted program in a folder the user can write, if it is in one.
    static func writableFolderWarning(_ program: String) -> String? {
        writableFolder(above: program).map { folder in
            "warning: \(program) is in \(folder), which you can write: a library or program put there runs as it "
                + "(the agent refuses it while it is mapped, but install trusted programs where only root writes)"
        }
    }
}
