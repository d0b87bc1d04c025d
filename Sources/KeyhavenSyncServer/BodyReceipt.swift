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
        var bytes: [UInt8] = []
        var held = 0
        var released = false
        var lastChunk: ContinuousClock.Instant
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
            guard state.bytes.count + chunk.readableBytes <= limit else {
                throw SyncServerError(.tooLarge, "the request body is over \(SyncService.size(limit))")
            }
            do throws(BodyBudget.Refusal) {
                try budget.take(chunk.readableBytes, for: key)
            } catch .address {
                throw SyncServerError(.tooManyRequests, "this address is sending as much as it may at once: wait for its other requests")
            } catch {
                throw SyncServerError(.unavailable, "the server is receiving as much as it may at once: try again")
            }
            state.held += chunk.readableBytes
            state.bytes.append(contentsOf: chunk.readableBytesView)
            state.lastChunk = .now
        }
    }

    /// The body, once whole.
    var bytes: [UInt8] { state.withLock { $0.bytes } }

    /// Why the body is overdue, or nil while it comes fast enough.
    func overdue() -> SyncServerError? {
        let now = ContinuousClock.now
        let (received, lastChunk) = state.withLock { ($0.bytes.count, $0.lastChunk) }
        if now - lastChunk > limits.bodyIdle {
            return SyncServerError(.timedOut, "the request body stopped coming for \(limits.bodyIdle.components.seconds) s")
        }
        let counted = now - started - limits.bodyGrace
        guard counted > .zero else { return nil }
        let seconds = Double(counted.components.seconds) + Double(counted.components.attoseconds) / 1e18
        if Double(received) < seconds * Double(limits.minimumBodyRate) {
            return SyncServerError(.timedOut, "the request body came slower than \(SyncService.size(limits.minimumBodyRate)) a second")
        }
        return nil
    }

    /// Gives back what the body held and takes no more; once only.
    func release() {
        let held = state.withLock { state -> Int in
            guard !state.released else { return 0 }
            state.released = true
            defer { state.held = 0 }
            return state.held
        }
        budget.give(held, for: key)
    }
}
