#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The monotonic clock (deadlines, reuse windows and answer times: wall-clock changes move none).
package enum MonotonicClock {
    package static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    package static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
