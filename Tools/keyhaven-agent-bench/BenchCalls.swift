import Foundation
import KeychainServices

/// The calls measured on ``Fixture``'s homes, by whichever route this process uses.
enum BenchCalls {
    /// What a program does to read one password: the query built as a Swift dictionary, bridged.
    static func copyMatching(_ index: Int) {
        var query = Fixture.query(Fixture.account(index))
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        check(SecItemCopyMatching(query as CFDictionary, &result), "SecItemCopyMatching")
    }

    /// One library call of `work`, given an item's index; nil for the echo, which is the agent's
    /// alone. An add's account is unique to this closure.
    static func call(for work: LoadRun.Work) -> ((Int) -> Void)? {
        switch work {
        case .copyMatching: return { copyMatching($0) }
        case .update: return { update($0, round: 1) }
        case .add:
            let run = UInt64.random(in: 0...UInt64.max)
            return { add("counted-\(run)-\($0)") }
        case .echo: return nil
        }
    }

    static func add(_ account: String) {
        check(Fixture.addExtra(account), "SecItemAdd")
    }

    static func update(_ index: Int, round: Int) {
        let changes = [kSecValueData as String: Data(repeating: UInt8(truncatingIfNeeded: round), count: 32)] as CFDictionary
        // Changes the data only: the item stays open to every program.
        check(SecItemUpdate(Fixture.query(Fixture.account(index)) as CFDictionary, changes), "SecItemUpdate")
    }
}

/// Stops the run (and the agent it started) when a measured call fails: a failed call is not a sample.
func check(_ status: OSStatus, _ call: String) {
    guard status != errSecSuccess else { return }
    fail("\(call) returned \(status)")
}

func fail(_ message: String) -> Never {
    BenchAgent.current?.stop()
    FileHandle.standardError.write(Data("keyhaven-agent-bench: \(message)\n".utf8))
    exit(1)
}
