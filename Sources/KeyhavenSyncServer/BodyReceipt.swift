import NIOCore
import Synchronization

/// One request body as it arrives: its bytes, what it holds of the ``BodyBudget``, and whether
/// it keeps coming. A body that stops for ``SyncLimits/bodyIdle``, or falls below
/// ``SyncLimits/minimumBodyRate`` once ``SyncLimits/bodyGrace`` has passed, is overdue: it is
/// answered 408 and gives back what it held at once, whether or not its client ever sends more.
final class BodyReceipt: Sendable {
    private let budget: BodyBudget
    private let key: String
    private let limit: Int
    private let limits: SyncLimits
    private let started = ContinuousClock.now
    private let state: Mutex<State>

    private struct State {
        /// The bytes so far.
        var bytes: [UInt8] = []
        /// What the body holds of the budget until ``release()``: its bytes, or the whole buffer
        /// once the body outgrew what its length announced (a grown buffer is resident as the
        /// bytes fill it, and the budget must bound what the server holds, not what it was sent).
        var held = 0
        var released = false
        var lastChunk: ContinuousClock.Instant
        /// Why the body was found overdue, once it was.
        var overdue: SyncServerError?
    }

    init(budget: BodyBudget, key: String, limit: Int, declared: Int?, limits: SyncLimits) {
        (self.budget, self.key, self.limit, self.limits) = (budget, key, limit, limits)
        var state = State(lastChunk: started)
        // Room for what the length announces (within the limit), as the bytes come: no doubling.
        if let declared { state.bytes.reserveCapacity(max(0, min(declared, limit))) }
        self.state = Mutex(state)
    }

    /// Takes one chunk: over the limit is 413, past the address's share 429, past the server's 503.
    func append(_ chunk: ByteBuffer) throws(SyncServerError) {
        try state.withLock { (state) throws(SyncServerError) in
            guard !state.released else { throw SyncServerError(.timedOut, "the request body came too slowly") }
            let needed = state.bytes.count + chunk.readableBytes
            guard needed <= limit else {
                throw SyncServerError(.tooLarge, "the request body is over \(SyncService.size(limit))")
            }
            do throws(BodyBudget.Refusal) {
                if needed <= state.bytes.capacity {
                    if needed > state.held {
                        try budget.take(needed - state.held, for: key)
                        state.held = needed
                    }
                } else {
                    try grow(&state, to: min(limit, max(needed, state.bytes.capacity * 2)))
                }
            } catch .address {
                throw SyncServerError(.tooManyRequests, "this address is sending as much as it may at once: wait for its other requests")
            } catch {
                throw SyncServerError(.unavailable, "the server is receiving as much as it may at once: try again")
            }
            state.bytes.append(contentsOf: chunk.readableBytesView)
            state.lastChunk = .now
        }
    }

    /// Moves the bytes to a buffer of `capacity`, holding it all of the budget, and the old
    /// buffer too while the copy lasts; refused, it takes nothing and leaves the bytes as they were.
    private func grow(_ state: inout State, to capacity: Int) throws(BodyBudget.Refusal) {
        let more = max(0, capacity - state.held)
        try budget.take(more, for: key)
        do throws(BodyBudget.Refusal) {
            try budget.takeForCopy(state.bytes.count)
        } catch {
            budget.give(more, for: key)
            throw error
        }
        var larger: [UInt8] = []
        larger.reserveCapacity(capacity)
        larger.append(contentsOf: state.bytes)
        let copied = state.bytes.count
        state.bytes = larger
        budget.giveAfterCopy(copied)
        state.held += more
    }

    /// The body, once whole.
    var bytes: [UInt8] { state.withLock { $0.bytes } }

    /// Why the body is overdue (kept from the first time it was found so), or nil while it comes
    /// fast enough.
    func overdue() -> SyncServerError? {
        let now = ContinuousClock.now
        return state.withLock { (state) -> SyncServerError? in
            if let overdue = state.overdue { return overdue }
            if now - state.lastChunk > limits.bodyIdle {
                state.overdue = SyncServerError(.timedOut, "the request body stopped coming for \(limits.bodyIdle.components.seconds) s")
            } else if case let counted = now - started - limits.bodyGrace, counted > .zero,
                      Double(state.bytes.count) < Self.seconds(counted) * Double(limits.minimumBodyRate) {
                state.overdue = SyncServerError(.timedOut, "the request body came slower than \(SyncService.size(limits.minimumBodyRate)) a second")
            }
            return state.overdue
        }
    }

    /// Why the body was found overdue, if it was; the clock is not read.
    var foundOverdue: SyncServerError? { state.withLock { $0.overdue } }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Gives back what the body held and takes no more; once only.
    func release() {
        let held = state.withLock { state -> Int in
            guard !state.released else { return 0 }
            state.released = true
            return state.held
        }
        budget.give(held, for: key)
    }
}
