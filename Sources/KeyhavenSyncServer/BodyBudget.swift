import Synchronization

/// How many request-body bytes the server holds at once, per client address and in all: a body
/// takes its bytes from both as they arrive, before it is buffered, and gives them back when the
/// request ends. So a flood of large bodies (each holding back its last byte) costs the server at
/// most ``total`` bytes, one address at most ``perAddress``, and everyone else is still served.
package final class BodyBudget: Sendable {
    package let perAddress: Int
    package let total: Int
    private let state = Mutex(State())

    private struct State {
        var held = 0
        var byAddress: [String: Int] = [:]
    }

    /// Why a body could not take more bytes.
    package enum Refusal: Error, Sendable {
        /// Its address holds ``perAddress`` bytes already.
        case address
        /// The server holds ``total`` bytes already.
        case server
    }

    /// The defaults hold one push of the most a push may carry per address (``ClientKey``), and
    /// several in all (``SyncLimits/bytesInFlight``).
    package init(perAddress: Int = SyncLimits().bytesPerPush, total: Int = SyncLimits().bytesInFlight) {
        (self.perAddress, self.total) = (perAddress, total)
    }

    /// The bytes held now, by every address.
    package var held: Int { state.withLock { $0.held } }

    /// Takes `count` more bytes for a body from `address`, or refuses and takes none.
    package func take(_ count: Int, for address: String) throws(Refusal) {
        try state.withLock { (state) throws(Refusal) in
            let mine = state.byAddress[address, default: 0]
            guard mine + count <= perAddress else { throw .address }
            guard state.held + count <= total else { throw .server }
            state.byAddress[address] = mine + count
            state.held += count
        }
    }

    /// Takes `count` bytes of the server's total alone, for as long as a body moves to a larger
    /// buffer: both buffers live during the copy, but the address keeps only the larger one.
    package func takeForCopy(_ count: Int) throws(Refusal) {
        try state.withLock { (state) throws(Refusal) in
            guard state.held + count <= total else { throw .server }
            state.held += count
        }
    }

    /// Gives back what ``takeForCopy(_:)`` took, once the copy is done.
    package func giveAfterCopy(_ count: Int) {
        state.withLock { $0.held -= count }
    }

    /// Gives back `count` bytes that a body from `address` took.
    package func give(_ count: Int, for address: String) {
        guard count > 0 else { return }
        state.withLock { state in
            let left = state.byAddress[address, default: 0] - count
            state.byAddress[address] = left > 0 ? left : nil
            state.held -= count
        }
    }
}
