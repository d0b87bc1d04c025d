#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import KeychainModel

/// The agent's stop request: SIGTERM, SIGINT or a `shutdown` request. The signal sources are
/// installed when this is made, before the socket is published, so a SIGTERM sent as soon as the
/// socket appears is never lost.
final class StopRequest: @unchecked Sendable {
    // @unchecked: the sources are set once in init and only cancelled afterwards; Dispatch
    // sources and semaphores are thread-safe.
    private let semaphore = DispatchSemaphore(value: 0)
    private let sources: [any DispatchSourceSignal]

    init() {
        System.ignore(SIGPIPE)
        let semaphore = self.semaphore
        sources = [SIGTERM, SIGINT].map { sig -> any DispatchSourceSignal in
            // The default action goes first (Dispatch's own handling takes over on resume).
            System.ignore(sig)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { semaphore.signal() }
            source.resume()
            return source
        }
    }

    func request() { semaphore.signal() }

    /// Returns when a stop was requested, and stops watching the signals.
    func wait() {
        semaphore.wait()
        sources.forEach { $0.cancel() }
    }
}
