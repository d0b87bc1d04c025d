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
    package static func run<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        do {
            return try $active.withValue(true) { try body() }
        } catch {
            throw error as! Failure  // withValue rethrows only what `body` threw
        }
    }

    /// `body`'s result, or nil when it fails, except that `.wouldBlock` is thrown: for a reading
    /// whose failure means "none" (no grants readable), where "busy" must not mean "none".
    package static func unlessBusy<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T? {
        do throws(StoreError) {
            return try body()
        } catch where error.code == .wouldBlock {
            throw error
        } catch {
            return nil
        }
    }
}
