import NIOCore
import NIOPosix
import Synchronization

/// Runs `body` and returns its result, or throws `expired` once `limit` has passed, without
/// waiting for `body` to end: it is cancelled and left to finish (or fail) on its own. A task
/// group would wait for it, and a query on a connection PostgreSQL dropped without a word may not
/// notice its cancellation for long. Cancelling the caller cancels `body`. The timer is an event
/// loop's (every database call has one; a sleeping task for each cost a tenth of the requests).
func withDeadline<R: Sendable>(_ limit: Duration, expired: @autoclosure @escaping @Sendable () -> any Error,
                               _ body: @escaping @Sendable () async throws -> R) async throws -> R {
    let outcome = Outcome<R>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            outcome.start(continuation)
            let work = Task {
                let result: Result<R, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                outcome.finish(result)
            }
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(limit)) {
                if outcome.finish(.failure(expired())) { work.cancel() }
            }
            outcome.keep(work: work, timer: timer)
        }
    } onCancel: {
        outcome.cancel()
    }
}

/// The one answer of ``withDeadline(_:expired:_:)``: whichever of the work and the timer comes first.
private final class Outcome<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        var work: Task<Void, Never>?
        var timer: Scheduled<Void>?
        var finished = false
        var cancelled = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<R, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func keep(work: Task<Void, Never>, timer: Scheduled<Void>) {
        let cancel = state.withLock { state -> Bool in
            (state.work, state.timer) = (work, timer)
            if state.finished { timer.cancel() }
            return state.cancelled
        }
        if cancel { work.cancel() }
    }

    /// Resumes the caller with `result` if nothing did before; whether this call did.
    @discardableResult
    func finish(_ result: Result<R, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<R, any Error>?, Scheduled<Void>?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
        return continuation != nil
    }

    func cancel() {
        let work = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }
}
