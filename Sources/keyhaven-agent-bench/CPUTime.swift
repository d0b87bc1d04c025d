import Foundation

/// CPU time (user and system), in nanoseconds, to account for where a load's cycles go: this
/// process's, or another process's of the same user (its CPU-time clock, clock_getcpuclockid(3)).
enum CPUTime {
    /// This process's CPU time so far, all its threads.
    static func ofThisProcess() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
    }

    /// The CPU time so far of process `pid`, all its threads; nil if it cannot be read.
    static func of(pid: Int32) -> UInt64? {
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func nanoseconds(_ value: timeval) -> UInt64 {
        UInt64(value.tv_sec) * 1_000_000_000 + UInt64(value.tv_usec) * 1_000
    }
}
