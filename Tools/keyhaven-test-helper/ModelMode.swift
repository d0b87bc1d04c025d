import Foundation
import KeychainServices
import Synchronization

/// `model NAME THREADS OPERATIONS`: THREADS threads each run OPERATIONS random operations on
/// ten accounts of their own (`NAME-t<thread>-<k>`), checking every status against a model of
/// what that thread has done. Prints each unexpected result (`unexpected ...`), then every
/// account the model says exists (`F account version`), then `done OPERATIONS-RUN UNEXPECTED`.
func runModel(name: String, threads: Int, operations: Int) -> Never {
    let report = Mutex<(lines: [String], unexpected: Int, run: Int)>(([], 0, 0))
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        var random = SystemRandomNumberGenerator()
        var model: [String: String] = [:]
        var lines: [String] = []
        var unexpected = 0
        func check(_ what: String, _ got: OSStatus, _ expected: OSStatus) {
            if got != expected {
                unexpected += 1
                lines.append("unexpected \(what) status \(got) expected \(expected)")
            }
        }
        for index in 0..<operations {
            let account = "\(name)-t\(thread)-\(Int.random(in: 0..<10, using: &random))"
            let version = "\(name)-t\(thread)-v\(index)"
            let exists = model[account] != nil
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                check("add \(account)", VersionedItems.add(account, version), exists ? errSecDuplicateItem : errSecSuccess)
                if !exists { model[account] = version }
            case 1:
                check("update \(account)", VersionedItems.update(account, version), exists ? errSecSuccess : errSecItemNotFound)
                if exists { model[account] = version }
            case 2:
                check("delete \(account)", VersionedItems.delete(account), exists ? errSecSuccess : errSecItemNotFound)
                model[account] = nil
            default:
                let (status, found) = VersionedItems.read(account)
                check("read \(account)", status, exists ? errSecSuccess : errSecItemNotFound)
                if found != model[account] {
                    unexpected += 1
                    lines.append("unexpected read \(account) gave \(found ?? "nothing") expected \(model[account] ?? "nothing")")
                }
            }
        }
        lines += model.sorted { $0.key < $1.key }.map { "F \($0.key) \($0.value)" }
        report.withLock {
            $0.lines += lines
            $0.unexpected += unexpected
            $0.run += operations
        }
    }
    let (lines, unexpected, run) = report.withLock { ($0.lines, $0.unexpected, $0.run) }
    for line in lines { VersionedItems.say(line) }
    VersionedItems.say("done \(run) \(unexpected)")
    exit(0)
}
