import Foundation
import KeychainModel
import KeyhavenAgent
import Testing

/// What each access control asks for, as Apple combines the constraints: biometry alone, the
/// password alone, either (`.userPresence`, `.or`), or both (`.and`).
struct PresenceRequirementTests {
    static func item(_ flags: UInt64?) -> StoredItem {
        StoredItem(itemClass: .genericPassword, rowID: 1, persistentReference: .rowID(.genericPassword, 1), isTombstone: false,
                   attributes: [:], accessControlFlags: flags, secret: nil)
    }

    @Test("Each combination of constraints asks for what Apple's LocalAuthentication would")
    func combinations() {
        let log = PresenceLog()
        let userPresence: UInt64 = 1 << 0, any: UInt64 = 1 << 1, currentSet: UInt64 = 1 << 3, companion: UInt64 = 1 << 5
        let passcode: UInt64 = 1 << 4, or: UInt64 = 1 << 14, and: UInt64 = 1 << 15, privateKeyUsage: UInt64 = 1 << 30
        #expect(log.requirement(Self.item(nil)) == .none)
        #expect(log.requirement(Self.item(privateKeyUsage)) == .none)
        #expect(log.requirement(Self.item(userPresence)) == .biometryOrPassword(currentSet: false))
        #expect(log.requirement(Self.item(any)) == .biometry(currentSet: false))
        #expect(log.requirement(Self.item(currentSet)) == .biometry(currentSet: true))
        #expect(log.requirement(Self.item(passcode)) == .password)
        #expect(log.requirement(Self.item(any | or | passcode)) == .biometryOrPassword(currentSet: false))
        #expect(log.requirement(Self.item(currentSet | and | passcode)) == .biometryAndPassword(currentSet: true))
        #expect(log.requirement(Self.item(companion)) == .unavailable)
        #expect(log.requirement(Self.item(companion | or | passcode)) == .password)
    }
}
