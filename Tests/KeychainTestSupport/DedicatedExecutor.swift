import Foundation
import Synchronization

/// A task executor with one thread of its own, for the sync tests' in-process hostile proxy and
/// the long-poll test's client.
///
/// A test drives devices by running `keyhaven` and waiting for it to exit, which holds a thread of
/// Swift's cooperative pool for the whole run, and that pool has as many threads as the machine has
/// cores (two here). With the tests of the other suites doing the same, a proxy on that pool could
/// get no thread while the very process waiting on it needed its answer: a full parallel run saw
/// `sync create` through the proxy give up after 60 s. Jobs run here in the order they came; none
/// of them may block.
public final class DedicatedExecutor: TaskExecutor, @unchecked Sendable {
    /// The one the proxies and the long-poll test share.
    public static let shared = DedicatedExecutor(name: "hostile-proxy")

    private let jobs = Mutex<[UnownedJob]>([])
    private let waiting = DispatchSemaphore(value: 0)

    private init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        waiting.signal()
    }

    private func run() -> Never {
        while true {
            waiting.wait()
            let next = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            next?.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
