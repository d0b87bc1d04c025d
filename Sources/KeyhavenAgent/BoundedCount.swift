import Synchronization

/// A count with a limit, safe from any thread without a lock: the agent's threads polling after
/// answers (``Wakefulness``).
final class BoundedCount: Sendable {
    private let limit: Int
    private let current = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Counts one more; false (and not counted) when the limit is reached.
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
}
