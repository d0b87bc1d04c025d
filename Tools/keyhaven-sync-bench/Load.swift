import Foundation
import Synchronization

/// Runs `workers` loops of `operation` for `seconds`; reports throughput and latency.
enum Load {
    static func run(name: String, workers: Int, seconds: Double, _ operation: @escaping @Sendable (Int) async throws -> Void) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var mine: [Duration] = []
                    while ContinuousClock.now < deadline {
                        let begin = ContinuousClock.now
                        try await operation(worker)
                        mine.append(ContinuousClock.now - begin)
                    }
                    return mine
                }
            }
            var all: [Duration] = []
            for try await part in group { all += part }
            return all
        }
        report(name, count: latencies.count, elapsed: ContinuousClock.now - start, latencies: latencies)
    }

    static func report(_ name: String, count: Int, elapsed: Duration?, latencies: [Duration]) {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            return String(format: "%.1f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        let rate = elapsed.map { String(format: "%.0f/s", Double(count) / (Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18)) } ?? "-"
        print("\(name): \(count) operations, \(rate), p50 \(percentile(0.5)), p99 \(percentile(0.99))")
    }
}
