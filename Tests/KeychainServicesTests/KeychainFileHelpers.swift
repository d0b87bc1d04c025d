import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport

/// Creates a keychain in the test's home; nil password: none.
func createKeychain(_ name: String, password: String?) throws -> SecKeychain {
    var keychain: SecKeychain?
    let bytes = Array((password ?? "").utf8)
    let status = SecKeychainCreate(name, UInt32(bytes.count), bytes, false, nil, &keychain)
    guard status == errSecSuccess, let keychain else { throw KeychainTestError.status(status) }
    return keychain
}

func unlock(_ keychain: SecKeychain?, _ password: String) -> OSStatus {
    let bytes = Array(password.utf8)
    return SecKeychainUnlock(keychain, UInt32(bytes.count), bytes, true)
}

func backUp(_ keychain: SecKeychain?, _ password: String, _ destination: String) -> OSStatus {
    let bytes = Array(password.utf8)
    return SecKeychainBackup(keychain, UInt32(bytes.count), bytes, destination)
}

func status(_ keychain: SecKeychain?) -> SecKeychainStatus? {
    var value: SecKeychainStatus = 0
    return SecKeychainGetStatus(keychain, &value) == errSecSuccess ? value : nil
}

func path(of keychain: SecKeychain?) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    var length = UInt32(buffer.count)
    guard SecKeychainGetPath(keychain, &length, &buffer) == errSecSuccess else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func changePassword(_ keychain: SecKeychain?, from old: String, to new: String) -> OSStatus {
    let (o, n) = (Array(old.utf8), Array(new.utf8))
    return SecKeychainChangePassword(keychain, UInt32(o.count), o, UInt32(n.count), n)
}

/// A generic password in a given keychain, with the account as its data.
func addIn(_ keychain: SecKeychain, _ account: String, _ accessibility: CFString = kSecAttrAccessibleWhenUnlocked) -> OSStatus {
    add([K.class: kSecClassGenericPassword, K.account: account, kSecAttrAccessible as String: accessibility,
         kSecUseKeychain as String: keychain, K.data: Data(account)])
}

/// The status of reading an account from a keychain (-1: found, but with the wrong data).
func readIn(_ keychain: SecKeychain, _ account: String) -> OSStatus {
    let (status, result) = copy([K.class: kSecClassGenericPassword, K.account: account,
                                 kSecMatchSearchList as String: [keychain], K.returnData: true])
    return status == errSecSuccess && result as? Data != Data(account) ? -1 : status
}

enum KeychainTestError: Error { case status(OSStatus) }
