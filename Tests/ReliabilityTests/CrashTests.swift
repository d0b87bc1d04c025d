import Foundation
import KeychainServices
import KeychainStore
import KeychainTestSupport
import Testing

/// A writer killed with SIGKILL at random moments: after each kill the keychain opens, passes
/// SQLite's integrity check, has every acknowledged write and no half write.
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct CrashTests {
    /// One operation the writer reported: `B index op account version`, and once it returned,
    /// `A index status [version-read]`.
    struct Operation {
        let op: String
        let account: String
        let version: String
    }

    /// The status an operation must return on a keychain in `model`'s state, and the state after.
    static func expected(_ operation: Operation, in model: [String: String]) -> (status: OSStatus, after: String?) {
        let current = model[operation.account]
        switch operation.op {
        case "add": return current == nil ? (errSecSuccess, operation.version) : (errSecDuplicateItem, current)
        case "update": return current == nil ? (errSecItemNotFound, nil) : (errSecSuccess, operation.version)
        case "delete": return current == nil ? (errSecItemNotFound, nil) : (errSecSuccess, nil)
        default: return (current == nil ? errSecItemNotFound : errSecSuccess, current)
        }
    }

    @Test("SIGKILL at random moments during adds, updates and deletes loses nothing acknowledged")
    func killedAtRandomMoments() throws {
        let kills = Reliability.count(quick: 100, full: 1_000)
        var model: [String: String] = [:]
        var (acknowledged, inFlight, writesInFlight) = (0, 0, 0)
        for run in 0..<kills {
            let started = try HelperProcess.start(["stream", "r\(run)", "10000000"])
            // Past start-up (about 30 ms in a debug build) into the stream of writes.
            usleep(UInt32.random(in: 20_000...200_000))
            kill(started.0.processIdentifier, SIGKILL)
            let (_, output) = HelperProcess.finish(started)
            #expect(started.0.terminationReason == .uncaughtSignal, "the writer ended before it was killed: \(output.suffix(300))")

            var pending: Operation?
            for line in output.split(separator: "\n") {
                let parts = line.split(separator: " ").map(String.init)
                if parts.first == "B", parts.count == 5 {
                    pending = Operation(op: parts[2], account: parts[3], version: parts[4])
                } else if parts.first == "A", parts.count >= 3, let operation = pending, let status = OSStatus(parts[2]) {
                    let (want, after) = Self.expected(operation, in: model)
                    #expect(status == want, "run \(run): \(operation) returned \(status), expected \(want)")
                    if operation.op == "read", status == errSecSuccess {
                        #expect(parts.count == 4 && parts[3] == model[operation.account], "run \(run): \(operation) read \(parts)")
                    }
                    model[operation.account] = after
                    acknowledged += 1
                    pending = nil
                } else {
                    Issue.record("run \(run): a line the writer should not print: \(line)")
                }
            }

            // A fresh open, as the next process would do.
            KeychainRegistry.shared.closeAll()
            #expect(try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok")
            let (observed, problem) = VersionedKeychain.readAll()
            #expect(problem == nil, "run \(run): \(problem ?? "")")
            // The write in flight at the kill either happened whole or not at all.
            var allowed = model
            if let operation = pending {
                inFlight += 1
                if operation.op != "read" { writesInFlight += 1 }
                let after = Self.expected(operation, in: model).after
                if observed[operation.account] == after { allowed[operation.account] = after }
            }
            #expect(observed == allowed, "run \(run): the keychain differs from the acknowledged writes")
            model = observed
        }
        Reliability.record("crash: \(kills) SIGKILLs, \(acknowledged) acknowledged operations checked, "
                           + "\(writesInFlight) writes in flight at the kill (each whole or absent), \(model.count) items at the end; lost: 0")
    }
}
