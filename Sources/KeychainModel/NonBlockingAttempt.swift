/// A call made where it must not wait: the agent answers a quick read on the thread that read the
/// request (its event loop) only if no lock it needs is held by another thread.
///
/// Inside ``run(_:)``, the engine takes its locks only when they are free and otherwise fails
/// with ``StoreError/Code/wouldBlock`` before it has changed anything; the caller then runs the
/// call where it may wait. Only reads are attempted this way.
package enum NonBlockingAttempt {
    @TaskLocal private static var active = false

    /// Whether the current call is such an attempt.
    package static var isActive: Bool { active }

    /// Runs `body` as an attempt that must not wait for a lock.
    package static func run<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do {
            return try $active.withValue(true) { try body() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.internalError, "an unexpected error in a non-blocking attempt")
        }
    }

    /// The error a lock that is not free raises inside an attempt, saying what would wait.
    package static func wouldBlock(_ message: String) -> StoreError {
        StoreError(.wouldBlock, message)
    }
}
