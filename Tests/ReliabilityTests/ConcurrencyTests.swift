import Foundation
import KeychainServices
import KeychainStore
import KeychainTestSupport
import Testing

/// Four processes of eight threads on one keychain file.
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct ConcurrencyTests {
    @Test("4 processes x 8 threads of random operations: every status as the model says, the final content the model's")
    func processesAndThreads() throws {
        let operations = Reliability.count(quick: 1_000, full: 10_000)
        // The keychain exists before they start, so they race on writes, not on creating it.
        #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "seed"] as CFDictionary, nil)
                == errSecSuccess)
        let workers = try (0..<4).map { try HelperProcess.start(["model", "p\($0)", "8", "\(operations)"]) }
        var expected: [String: String] = [:]
        var run = 0
        for (status, output) in workers.map(HelperProcess.finish) {
            #expect(status == 0)
            for line in output.split(separator: "\n") {
                let parts = line.split(separator: " ").map(String.init)
                switch parts.first {
                case "F" where parts.count == 3: expected[parts[1]] = parts[2]
                case "done" where parts.count == 3:
                    run += Int(parts[1]) ?? 0
                    #expect(parts[2] == "0", "unexpected results")
                default: Issue.record("\(line)")
                }
            }
        }
        #expect(run == 4 * 8 * operations)
        KeychainRegistry.shared.closeAll()
        #expect(try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok")
        let (observed, problem) = VersionedKeychain.readAll()
        #expect(problem == nil, "\(problem ?? "")")
        #expect(observed == expected)
        Reliability.record("concurrency: 4 processes x 8 threads, \(run) operations, every status as modelled, "
                           + "final \(observed.count) items equal to the model; unexpected: 0")
    }
}
