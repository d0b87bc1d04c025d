#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// A detached POSIX thread running one closure: the agent's accept loop and each connection.
enum AgentThread {
    /// The closure a new thread runs, boxed for `pthread_create`.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread; `.notAvailable` when the system has no thread to give.
    static func start(_ body: @escaping @Sendable () -> Void) throws(StoreError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { argument in
            let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            throw StoreError(.notAvailable, "cannot start a thread: \(String(cString: strerror(started)))")
        }
    }
}
