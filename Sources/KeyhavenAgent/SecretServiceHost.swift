import FoundationEssentials
import KeychainStore
import Synchronization

/// Whether this agent provides the Secret Service, and who asked it to.
///
/// The agent library does not link the bus: keyhavend installs how to start the provider
/// (``install(_:)``). A provider clients asked for (`keyhavend --secret-service` handing over to
/// the running agent) lasts as long as one of their connections: when the last closes (the
/// processes were stopped, by systemd or a signal), the agent gives the name up. One the agent was
/// started with lasts as long as the agent.
package final class SecretServiceHost: Sendable {
    /// Starts the provider on the bus at an address (nil: the session bus of the agent's own
    /// environment) and gives back how to stop it.
    package typealias Start = @Sendable (_ busAddress: String?) throws(StoreError) -> @Sendable () -> Void

    private struct State {
        var start: Start?
        var stop: (@Sendable () -> Void)?
        /// The connections whose clients asked for it.
        var owners: Set<ObjectIdentifier> = []
        /// The agent was started with it: no connection's closing stops it.
        var permanent = false
    }

    private let state = Mutex(State())

    package init() {}

    /// How to start the provider; without it, asking for the Secret Service is `.unimplemented`.
    package func install(_ start: @escaping Start) {
        state.withLock { $0.start = start }
    }

    /// Whether the provider is running.
    package var isProviding: Bool { state.withLock { $0.stop != nil } }

    /// Starts the provider unless it runs already; `owner` is the connection that asked (nil: the
    /// agent's own start). Throws the provider's failure (another program owns the name).
    package func provide(busAddress: String?, owner: ObjectIdentifier?) throws(StoreError) {
        // Started under the lock: two clients asking at once start one provider.
        try state.withLock { (state) throws(StoreError) in
            if state.stop == nil {
                guard let start = state.start else {
                    throw StoreError(.unimplemented, "this keyhavend was built without the Secret Service")
                }
                state.stop = try start(busAddress)
            }
            if let owner { state.owners.insert(owner) } else { state.permanent = true }
        }
    }

    /// A connection closed: if it was the last of those that asked for the provider (and the
    /// agent was not started with it), the provider stops.
    package func connectionClosed(_ connection: ObjectIdentifier) {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.owners.remove(connection) != nil, state.owners.isEmpty, !state.permanent, let stop = state.stop else { return nil }
            state.stop = nil
            return stop
        }
        stop?()
    }
}
