import Dispatch
import KeychainStore
import KeyhavenAgentClient
import Synchronization

/// The agent's background sync, as `keyhaven sync now` and `sync status` reach it
/// (``AgentRequest/syncNow``, ``AgentRequest/syncStatus(staleAfter:)``): on the keychains the
/// agent holds, so a keychain unlocked through the agent needs no password again.
///
/// The agent library does not link the sync engine: keyhavend installs the work
/// (``install(round:status:)``). A round asked for here and the background's take turns through
/// the home's sync lock, as two processes' rounds do.
package final class SyncHost: Sendable {
    /// A round now; its failure is the `StoreError` whose Apple status is the command's exit status.
    package typealias Round = @Sendable () async throws(StoreError) -> SyncRoundSummary
    /// The status, warning of devices silent for more than the seconds given; nil when not syncing.
    package typealias Status = @Sendable (_ staleAfter: UInt64) throws(StoreError) -> SyncStatusSummary?

    private struct Work: Sendable {
        let round: Round
        let status: Status
    }

    private let work = Mutex<Work?>(nil)

    package init() {}

    /// The work; without it, asking for a round or the status is `.unimplemented`.
    package func install(round: @escaping Round, status: @escaping Status) {
        work.withLock { $0 = Work(round: round, status: status) }
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
