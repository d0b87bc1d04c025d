import Foundation

/// The machine's floor for any request and answer between two threads that sleep while they
/// wait: 40 bytes each way over a Unix socket pair, one thread answering the other with plain
/// blocking `read` and `write`. On a virtual machine whose idle CPUs halt, most of it is the two
/// wake-ups (docs/benchmarks.md, "Through the agent").
enum SocketFloor {
    static func measure(rounds: Int = 20_000) -> Latencies {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { fail("socketpair failed") }
        let (near, far) = (pair[0], pair[1])
        let answerer = Thread {
            var buffer = [UInt8](repeating: 0, count: 40)
            while true {
                let count = read(far, &buffer, buffer.count)
                guard count > 0 else { return }
                _ = write(far, buffer, count)
            }
        }
        answerer.start()
        var latencies = Latencies()
        var buffer = [UInt8](repeating: 7, count: 40)
        for _ in 0..<rounds {
            timed(&latencies) {
                _ = write(near, buffer, buffer.count)
                var got = 0
                while got < buffer.count {
                    let count = buffer.withUnsafeMutableBytes { read(near, $0.baseAddress! + got, $0.count - got) }
                    guard count > 0 else { return }
                    got += count
                }
            }
        }
        close(near)
        usleep(10_000)
        close(far)
        return latencies
    }
}
