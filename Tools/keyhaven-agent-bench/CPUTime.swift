import Foundation

/// CPU time (user and system, all threads), in nanoseconds, to account for where a load's cycles
/// go: this process's, or another process's of the same user (clock_getcpuclockid(3)).
enum CPUTime {
    /// This process's CPU time so far.
    static func ofThisProcess() -> UInt64 { read(CLOCK_PROCESS_CPUTIME_ID) ?? 0 }

    /// The CPU time so far of process `pid`; nil if it cannot be read.
    static func of(pid: Int32) -> UInt64? {
        var clock = clockid_t()
        guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
        return read(clock)
    }

    private static func read(_ clock: clockid_t) -> UInt64? {
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
