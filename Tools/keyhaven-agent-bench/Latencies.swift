import Foundation
import KeyhavenAgentClient

/// Per-call times of one measured operation, in nanoseconds.
struct Latencies {
    private(set) var samples: [UInt64] = []

    mutating func append(_ nanoseconds: UInt64) { samples.append(nanoseconds) }
    mutating func append(contentsOf other: Latencies) { samples += other.samples }

    var count: Int { samples.count }

    /// The `p` quantile (0...1) in microseconds, nearest rank.
    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let rank = min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1000
    }

    var p50: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
}

/// The monotonic clock, in nanoseconds.
@inline(__always) func now() -> UInt64 { MonotonicClock.nanoseconds() }

/// Sleeps in steps of a millisecond until ``now()`` reaches `deadline`.
func sleep(until deadline: UInt64) {
    while now() < deadline { usleep(1_000) }
}

/// Times `body` once.
@inline(__always) func timed(_ latencies: inout Latencies, _ body: () -> Void) {
    let start = now()
    body()
    latencies.append(now() - start)
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
