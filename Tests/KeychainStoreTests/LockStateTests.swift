import Crypto
import Foundation
@testable import KeychainStore
import Testing

/// The lock state's cases carry what exists in each alone: the password key only while unlocked,
/// the password's parameters only where there is a password.
struct LockStateTests {
    let kdf = PasswordKDF(logN: 10, salt: Data(repeating: 1, count: 16))
    let key = SymmetricKey(size: .bits256)

    @Test("A keychain opens unlocked without a password and locked with one; foreign only with a password")
    func asOpened() {
        #expect(LockState(kdf: nil, foreign: false).isUnlocked && LockState(kdf: nil, foreign: false).kdf == nil)
        // A copy without a password is opened by the device key or by nothing: never "foreign".
        #expect(!LockState(kdf: nil, foreign: true).isForeign)
        let locked = LockState(kdf: kdf, foreign: false)
        #expect(!locked.isUnlocked && !locked.isForeign && locked.kdf == kdf && locked.passwordKey == nil)
        let foreign = LockState(kdf: kdf, foreign: true)
        #expect(foreign.isForeign && !foreign.isUnlocked && foreign.passwordKey == nil)
    }

    @Test("Unlocked holds the password key; a re-key without a password holds none")
    func unlocked() {
        let unlocked = LockState.opened(kdf: kdf, passwordKey: key)
        #expect(unlocked.isUnlocked && unlocked.kdf == kdf && unlocked.passwordKey == key)
        let none = LockState.opened(kdf: nil, passwordKey: key)
        #expect(none.isUnlocked && none.kdf == nil && none.passwordKey == nil)
    }

    @Test("A bound keychain's device key is the unsealed one's, and there is none while sealed")
    func binding() {
        #expect(TPMBinding.unbound.seal == nil && TPMBinding.unbound.deviceKey == nil)
        #expect(TPMBinding.sealed(Data([1])).seal == Data([1]) && TPMBinding.sealed(Data([1])).deviceKey == nil)
        #expect(TPMBinding.unsealed(Data([1]), deviceKey: key).deviceKey == key)
    }
}
