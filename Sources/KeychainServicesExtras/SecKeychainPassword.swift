import Foundation
import KeychainServices
import KeychainStore

/// Sets, changes or removes a keychain's password (nil: the default keychain).
///
/// `oldPassword` must be the current password (zero length when the keychain has none), else
/// `errSecAuthFailed` and nothing changes. A zero-length `newPassword` removes the password: the
/// keychain is then always unlocked, and its `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`
/// items are deleted, as iOS deletes them when the passcode is removed. The class keys the
/// password protects are replaced and their items re-encrypted, all or nothing, so an old copy of
/// the file and the old password open nothing written since. The keychain is unlocked afterwards. (Apple's private
/// interface of the same name and shape.)
@discardableResult
public func SecKeychainChangePassword(_ keychain: SecKeychain?, _ oldPasswordLength: UInt32, _ oldPassword: UnsafeRawPointer?,
                                      _ newPasswordLength: UInt32, _ newPassword: UnsafeRawPointer?) -> OSStatus {
    var old = bytes(oldPassword, oldPasswordLength), new = bytes(newPassword, newPasswordLength)
    defer { zeroize(&old); zeroize(&new) }
    return withDatabase(keychain) { database throws(StoreError) in try database.changePassword(old: old, new: new) }
}

/// Writes a backup of a keychain (nil: the default) to a new file at `destinationPath`: a keychain
/// that opens with the password alone on any machine, without the ThisDeviceOnly items and
/// without any key bound to this machine or its TPM. The keychain needs a password (`errSecParam`
/// otherwise), `password` must be it (`errSecAuthFailed` otherwise; a bound keychain's TPM counts
/// the failure), and it must be unlocked (`errSecInteractionNotAllowed` otherwise);
/// `errSecDuplicateKeychain` if the destination exists. Through the agent, only the administrator
/// programs (`keyhaven`, Keychain Access) may ask: any other gets `errSecAuthFailed`. Open the
/// backup with `SecKeychainOpen` and `SecKeychainUnlock`.
@discardableResult
public func SecKeychainBackup(_ keychain: SecKeychain?, _ passwordLength: UInt32, _ password: UnsafeRawPointer?,
                              _ destinationPath: UnsafePointer<CChar>) -> OSStatus {
    let destination = String(cString: destinationPath)
    var secret = bytes(password, passwordLength)
    defer { zeroize(&secret) }
    return withDatabase(keychain) { database throws(StoreError) in try database.backup(to: destination, password: secret) }
}

/// Runs `body` on the keychain a reference names (nil: the default), as an `OSStatus`.
private func withDatabase(_ keychain: SecKeychain?, _ body: (any KeychainBackend) throws(StoreError) -> Void) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let database = try FileKeychains.database(keychain)
        try engine { () throws(StoreError) in try body(database) }
    }
}
