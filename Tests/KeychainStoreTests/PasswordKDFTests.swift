import Crypto
import Foundation
import KeychainStore
import Synchronization
import Testing

/// The password function's bound on memory: at most four keys derived at once in a process, the
/// agent's clients each on a thread of their own included.
struct PasswordKDFTests {
    @Test("Twelve threads deriving keys at once: never more than four derivations run together, and every key comes out right")
    func derivationsAreBounded() throws {
        // 2^14 x r 8: 16 MiB and some milliseconds a derivation, long enough to overlap.
        let kdf = PasswordKDF(logN: 14, salt: Data(repeating: 7, count: 16))
        let expected = try kdf.deriveKey(from: Array("a password".utf8))
        let peak = Atomic<Int>(0)
        let running = Atomic<Bool>(true)
        let sampler = Thread {
            while running.load(ordering: .relaxed) {
                let now = PasswordKDF.derivingNow
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                sched_yield()
            }
        }
        sampler.start()
        let wrong = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<12 {
            group.enter()
            Thread {
                for _ in 0..<2 where (try? kdf.deriveKey(from: Array("a password".utf8))) != expected { wrong.add(1, ordering: .relaxed) }
                group.leave()
            }.start()
        }
        group.wait()
        running.store(false, ordering: .relaxed)
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(peak.load(ordering: .relaxed) <= PasswordKDF.concurrentDerivations)
        #expect(peak.load(ordering: .relaxed) >= 2, "the derivations never overlapped: the test shows nothing")
        #expect(PasswordKDF.derivingNow == 0)
    }
}
