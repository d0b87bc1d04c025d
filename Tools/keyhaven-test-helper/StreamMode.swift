import Foundation
import KeychainServices

/// `stream RUN COUNT`: random adds, updates, deletes and reads on 40 accounts, reporting
/// each before it starts (`B index op account version`) and once it returned
/// (`A index status [version read]`), for the crash test, which kills this process at a random
/// moment and checks the keychain against what was acknowledged.
func runStream(run: String, count: Int) -> Never {
    var random = SystemRandomNumberGenerator()
    for index in 0..<count {
        let account = "s-\(Int.random(in: 0..<40, using: &random))"
        let version = "\(run)-\(index)"
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            VersionedItems.say("B \(index) add \(account) \(version)")
            VersionedItems.say("A \(index) \(VersionedItems.add(account, version))")
        case 1:
            VersionedItems.say("B \(index) update \(account) \(version)")
            VersionedItems.say("A \(index) \(VersionedItems.update(account, version))")
        case 2:
            VersionedItems.say("B \(index) delete \(account) -")
            VersionedItems.say("A \(index) \(VersionedItems.delete(account))")
        default:
            VersionedItems.say("B \(index) read \(account) -")
            let (status, found) = VersionedItems.read(account)
            VersionedItems.say("A \(index) \(status) \(found ?? "-")")
        }
    }
    exit(0)
}
