import Synchronization

/// How many clients the agent serves now, bounded: a client beyond the limit is closed at once,
/// so no number of connections can take the agent's memory.
final class ConnectionCount: Sendable {
    private let limit: Int
    private let current = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Counts a new client; false (and not counted) when the limit is reached.
    func enter() -> Bool {
        var seen = current.load(ordering: .relaxed)
        while seen < limit {
            let (exchanged, original) = current.compareExchange(expected: seen, desired: seen + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            seen = original
        }
        return false
    }

    func leave() { current.subtract(1, ordering: .acquiringAndReleasing) }

    var count: Int { current.load(ordering: .relaxed) }
}
