import Crypto
import FoundationEssentials

/// The machine-bound secret that stands in for Apple's hardware UID key.
///
/// 32 random bytes in `<home>/private/device.key` (file 0600 in a 0700 folder), created once per
/// keychain home. Every class key in a keybag is wrapped under a key derived from it, so a
/// keychain file alone, copied elsewhere, opens nothing.
package enum DeviceKey {
    static let size = 32

    /// Loads the home's device key, creating it if `create` and none exists.
    package static func load(home: KeychainHome, create: Bool) throws(StoreError) -> SymmetricKey {
        if var bytes = try FileSecurity.readSmallFile(home.deviceKeyPath, maximum: size) {
            guard bytes.count == size else {
                zeroize(&bytes)
                throw StoreError(.invalidKeychain, "the device key at \(home.deviceKeyPath) is damaged")
            }
            return KeychainCrypto.key(consuming: &bytes)
        }
        guard create else {
            throw StoreError(.notAvailable, "no device key at \(home.deviceKeyPath): the keychain belongs to another home or machine")
        }
        try home.prepare()
        var fresh = KeychainCrypto.randomKey().withUnsafeBytes { Array($0) }
        defer { zeroize(&fresh) }
        // If another process created one first, ours is discarded and theirs is used.
        _ = try FileSecurity.createExclusively(home.deviceKeyPath, bytes: fresh)
        return try load(home: home, create: false)
    }
}
