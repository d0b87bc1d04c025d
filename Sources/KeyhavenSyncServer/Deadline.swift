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
    try await racing(body) { expire in
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(limit)) { expire(expired()) }
        return { timer.cancel() }
    }
}

/// Runs `body` and returns its result, asking `overdue` every `interval` meanwhile: once it
/// answers an error, that error is thrown at once and `body` is cancelled and left to finish on
/// its own, as ``withDeadline(_:expired:_:)`` does (a request body a client stopped sending may
/// never end by itself).
func withWatchdog<R: Sendable>(every interval: Duration, overdue: @escaping @Sendable () -> (any Error)?,
                               _ body: @escaping @Sendable () async throws -> R) async throws -> R {
    try await racing(body) { expire in
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(initialDelay: TimeAmount(interval),
                                                                                       delay: TimeAmount(interval)) { _ in
            if let error = overdue() { expire(error) }
        }
        return { timer.cancel() }
    }
}

/// `body` in a task of its own, raced against the timer `start` sets up: `start` is given the
/// function that ends the race with an error (and cancels `body`), and returns what stops the timer.
private func racing<R: Sendable>(_ body: @escaping @Sendable () async throws -> R,
                                 timer start: (@escaping @Sendable (any Error) -> Void) -> @Sendable () -> Void) async throws -> R {
    let outcome = Outcome<R>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            outcome.start(continuation)
            let work = Task {
                let result: Result<R, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                outcome.finish(result)
            }
            let stopTimer = start { error in if outcome.finish(.failure(error)) { work.cancel() } }
            outcome.keep(work: work, stopTimer: stopTimer)
        }
    } onCancel: {
        outcome.cancel()
    }
}

/// The one answer of ``withDeadline(_:expired:_:)`` and ``withWatchdog(every:overdue:_:)``:
/// whichever of the work and the timer comes first.
private final class Outcome<R: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<R, any Error>?
        var work: Task<Void, Never>?
        var stopTimer: (@Sendable () -> Void)?
        var finished = false
        var cancelled = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<R, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func keep(work: Task<Void, Never>, stopTimer: @escaping @Sendable () -> Void) {
        let (cancel, finished) = state.withLock { state -> (Bool, Bool) in
            (state.work, state.stopTimer) = (work, stopTimer)
            return (state.cancelled, state.finished)
        }
        if finished { stopTimer() }
        if cancel { work.cancel() }
    }

    /// Resumes the caller with `result` if nothing did before; whether this call did.
    @discardableResult
    func finish(_ result: Result<R, any Error>) -> Bool {
        let (continuation, stopTimer) = state.withLock { state -> (CheckedContinuation<R, any Error>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.stopTimer)
        }
        stopTimer?()
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
