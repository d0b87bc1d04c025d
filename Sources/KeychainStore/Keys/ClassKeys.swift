import Crypto
import FoundationEssentials

/// The keys an open keychain holds in memory, derived from its class keys.
///
/// `SymmetricKey` keeps its bytes in storage that swift-crypto zeroes when it is freed, and
/// neither type prints them.
package struct ClassKeys: Sendable {
    /// Encrypts item metadata blobs of the class.
    let metadata: SymmetricKey
    /// Wraps per-item secret keys of the class.
    let secretWrapping: SymmetricKey

    init(classKey: SymmetricKey) {
        metadata = KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/metadata")
        secretWrapping = KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/secret-wrapping")
    }
}

/// Every key of one unlocked keychain.
package struct UnlockedKeys: Sendable {
    /// The key of the search columns' keyed hashes.
    let index: SymmetricKey
    /// Class keys in memory; a class that is absent is locked (or, for `akpu`, does not exist).
    var classes: [KeyClass: ClassKeys]

    func keys(for keyClass: KeyClass) throws(StoreError) -> ClassKeys {
        guard let keys = classes[keyClass] else {
            if keyClass.requiresPassword {
                throw StoreError(.notAvailable, "items that need a passcode cannot exist in a keychain without a password")
            }
            throw StoreError(.interactionNotAllowed, "the keychain is locked for this accessibility class")
        }
        return keys
    }
}

extension UnlockedKeys: CustomStringConvertible {
    package var description: String { "UnlockedKeys(classes: \(classes.keys.map(\.rawValue).sorted()))" }
}
