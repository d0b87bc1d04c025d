import Dispatch
import KeychainStore
import KeyhavenAgentClient
import Synchronization

/// The agent's background sync, as `keyhaven sync now`, `status` and `devices` reach it
/// (``AgentRequest/syncNow``, ``AgentRequest/syncStatus(staleAfter:)``,
/// ``AgentRequest/syncDevices``): on the keychains the agent holds, so a keychain unlocked
/// through the agent needs no password again.
///
/// The agent library does not link the sync engine: keyhavend installs the work
/// (``install(_:)``). A round asked for here and the background's take turns through the home's
/// sync lock, as two processes' rounds do. Each failure is the `StoreError` whose Apple status is
/// the command's exit status.
package final class SyncHost: Sendable {
    /// What keyhavend installs.
    package struct Work: Sendable {
        /// A round now.
        let round: @Sendable () async throws(StoreError) -> SyncRoundSummary
        /// The status, warning of devices silent for more than the seconds given; nil when not syncing.
        let status: @Sendable (_ staleAfter: UInt64) throws(StoreError) -> SyncStatusSummary?
        /// The account's devices.
        let devices: @Sendable () throws(StoreError) -> [SyncDeviceSummary]

        package init(round: @escaping @Sendable () async throws(StoreError) -> SyncRoundSummary,
                     status: @escaping @Sendable (_ staleAfter: UInt64) throws(StoreError) -> SyncStatusSummary?,
                     devices: @escaping @Sendable () throws(StoreError) -> [SyncDeviceSummary]) {
            (self.round, self.status, self.devices) = (round, status, devices)
        }
    }

    private let work = Mutex<Work?>(nil)

    package init() {}

    /// The work; without it, each sync request is `.unimplemented`.
    package func install(_ work: Work) {
        self.work.withLock { $0 = work }
    }

    /// Runs a round and waits for it (on the connection's own thread, which has nothing else to do).
    func round() throws(StoreError) -> SyncRoundSummary {
        let round = try installed().round
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do throws(StoreError) {
                outcome.set(.success(try await round()))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }

    func status(staleAfter: UInt64) throws(StoreError) -> SyncStatusSummary? {
        try installed().status(staleAfter)
    }

    func devices() throws(StoreError) -> [SyncDeviceSummary] {
        try installed().devices()
    }

    private func installed() throws(StoreError) -> Work {
        guard let work = work.withLock({ $0 }) else { throw StoreError(.unimplemented, "this agent runs no sync") }
        return work
    }

    /// A round's result, handed from its task to the waiting thread.
    private final class Outcome: Sendable {
        private let result = Mutex<Result<SyncRoundSummary, StoreError>?>(nil)

        func set(_ value: Result<SyncRoundSummary, StoreError>) { result.withLock { $0 = value } }

        func get() throws(StoreError) -> SyncRoundSummary {
            guard let result = result.withLock({ $0 }) else { throw StoreError(.internalError, "a sync round ended without a result") }
            return try result.get()
        }
    }
}
