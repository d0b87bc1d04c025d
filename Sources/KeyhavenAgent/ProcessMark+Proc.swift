import FoundationEssentials
import KeyhavenSSHAgent

extension ProcessMark {
    /// Process `pid`'s mark from `/proc/PID/stat` (its start time is the 22nd field, counted
    /// after the parenthesised name, which may hold spaces); nil once the process is gone.
    static func of(_ pid: Int32) -> ProcessMark? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is the state, the 3rd field; the start time is the 22nd.
        guard fields.count > 19, let started = UInt64(fields[19]) else { return nil }
        return ProcessMark(pid: pid, started: started)
    }

    /// Whether the process the mark names still runs (not a later one given its pid).
    static func isRunning(_ mark: ProcessMark) -> Bool {
        of(mark.pid) == mark
    }
}

/// The SSH agent's approvals, under a name files that see the agent protocol's `AgentRequest`
/// (and not the SSH protocol's) can use.
typealias SSHApprovalStore = SSHApprovals
