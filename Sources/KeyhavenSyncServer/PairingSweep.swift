import Logging
import ServiceLifecycle

/// Deletes expired pairing messages every ``interval`` (``SyncStore/sweepPairing()``); a failure
/// waits for the next turn. Stops at graceful shutdown.
package struct PairingSweep: Service, CustomStringConvertible {
    let store: SyncStore
    let interval: Duration

    package init(store: SyncStore, interval: Duration = .seconds(60)) {
        (self.store, self.interval) = (store, interval)
    }

    package var description: String { "PairingSweep" }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                    try await store.sweepPairing()
                } catch {
                    if Task.isCancelled { return }
                    store.logger.notice("sweeping expired pairing messages failed; trying again later")
                }
            }
        }
    }
}
