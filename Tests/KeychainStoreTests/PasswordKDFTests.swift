import Crypto
import Foundation
import KeychainTestSupport
import _CryptoExtras
import KeychainStore
import Synchronization
import Testing

/// The password function's bound on memory: at most four keys derived at once in a process, the
/// agent's clients each on a thread of their own included.
struct PasswordKDFTests {
    @Test("Twelve threads deriving keys at once: never more than four derivations run together, and every key comes out right")
    func derivationsAreBounded() throws {
        // 2^16 x r 8: 64 MiB and tens of milliseconds a derivation, long enough to overlap.
        let kdf = PasswordKDF(logN: 16, salt: Data(repeating: 7, count: 16))
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

    @Test("scrypt through OpenSSL gives swift-crypto's key and the openssl command's, so keychains made with either open")
    func sameKeyAsSwiftCrypto() throws {
        let cases: [(password: String, logN: UInt8, r: UInt32, p: UInt32)] = [
            ("a password", 10, 8, 1), ("", 12, 8, 2), ("päßwörd ☃", 14, 1, 1), (String(repeating: "long", count: 64), 11, 4, 3),
        ]
        for (index, test) in cases.enumerated() {
            let salt = Data((0..<16).map { UInt8(truncatingIfNeeded: $0 * 31 + index) })
            let ours = try PasswordKDF(logN: test.logN, r: test.r, p: test.p, salt: salt).deriveKey(from: Array(test.password.utf8))
            let theirs = try KDF.Scrypt.deriveKey(from: Array(test.password.utf8), salt: salt, outputByteCount: 32,
                                                   rounds: 1 << Int(test.logN), blockSize: Int(test.r), parallelism: Int(test.p))
            #expect(ours == theirs, "case \(index)")
        }
        let salt = Data("NaCl-keyhaven-16".utf8)
        let ours = try PasswordKDF(logN: 10, r: 8, p: 1, salt: salt).deriveKey(from: Array("password".utf8))
        let command = try CommandRunner.execute("/usr/bin/openssl", [
            "kdf", "-keylen", "32", "-kdfopt", "pass:password", "-kdfopt", "hexsalt:" + salt.map { String(format: "%02x", $0) }.joined(),
            "-kdfopt", "n:1024", "-kdfopt", "r:8", "-kdfopt", "p:1", "SCRYPT",
        ], environment: ["PATH": "/usr/bin:/bin"])
        let hex = ours.withUnsafeBytes { $0.map { String(format: "%02X", $0) }.joined(separator: ":") }
        #expect(command.output.trimmingCharacters(in: .whitespacesAndNewlines) == hex, "\(command)")
    }
}
