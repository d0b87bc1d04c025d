#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Seconds on the monotonic clock (deadlines and reuse windows: wall-clock changes move neither).
enum MonotonicClock {
    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
