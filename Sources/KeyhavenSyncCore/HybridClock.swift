
/// A hybrid logical clock (Kulkarni et al.): milliseconds of wall time in the high 48 bits, a
/// counter in the low 16. A device's versions strictly increase, never run behind a version it has
/// seen from another device, and stay close to wall time, so "the later edit wins" means what a
/// person expects even when clocks differ a little.
package struct HybridClock: Hashable, Sendable {
    package private(set) var last: UInt64 = 0

    package init(last: UInt64 = 0) { self.last = last }

    /// A new version for an edit made at `milliseconds` of wall time.
    package mutating func tick(milliseconds: UInt64) -> UInt64 {
        let physical = (milliseconds & 0xFFFF_FFFF_FFFF) << 16
        last = max(physical, last &+ 1)
        return last
    }

    /// Takes in a version seen from another device: the next tick is later than it.
    package mutating func observe(_ version: UInt64) {
        last = max(last, version)
    }
}
