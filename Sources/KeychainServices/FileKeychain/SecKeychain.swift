import Foundation
import KeychainStore

/// Creates a keychain file and opens it unlocked.
///
/// `pathName` is a path, or a name for a keychain in the keychain home. A password of zero length
/// makes a keychain without a password: always unlocked, like a device without a passcode. With
/// no password and `promptUser`, the call fails with `errSecInteractionNotAllowed`: there is no
/// dialog to ask in. The new keychain joins the search list. `errSecDuplicateKeychain` if a
/// keychain is already there.
@discardableResult
public func SecKeychainCreate(_ pathName: UnsafePointer<CChar>, _ passwordLength: UInt32, _ password: UnsafeRawPointer?,
                              _ promptUser: Bool, _ initialAccess: SecAccess?,
                              _ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        var secret = bytes(password, passwordLength)
        defer { zeroize(&secret) }
        if secret.isEmpty && promptUser {
            throw SecStatusError(errSecInteractionNotAllowed, "no password was given and there is no dialog to ask for one")
        }
        let (home, preferences) = try FileKeychains.preferences()
        let path = FileKeychains.path(for: String(cString: pathName), in: home)
        try engine { () throws(StoreError) in try Backends.create(at: path, home: home, password: secret) }
        var updated = preferences
        var list = preferences.searchPaths(home)
        if !list.contains(path) { list.append(path) }
        updated.searchList = list
        try FileKeychains.save(updated, home)
        keychain.pointee = SecKeychain(path: path)
    }
}

/// A reference to the keychain at a path (or a name in the keychain home). Succeeds whether or not
/// the file exists; using a reference to a missing file gives `errSecNoSuchKeychain`.
@discardableResult
public func SecKeychainOpen(_ pathName: UnsafePointer<CChar>, _ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        keychain.pointee = SecKeychain(path: FileKeychains.path(for: String(cString: pathName), in: try FileKeychains.home()))
    }
}

/// Deletes a keychain's file (or each of an array's), and takes it out of the search list and,
/// if it was the default, the default reverts to the login keychain.
@discardableResult
public func SecKeychainDelete(_ keychainOrArray: SecKeychain?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (home, preferences) = try FileKeychains.preferences()
        let path = keychainOrArray?.path ?? preferences.defaultPath(home)
        try engine { () throws(StoreError) in try Backends.deleteKeychain(at: path, home: home) }
        var updated = preferences
        updated.searchList = preferences.searchList?.filter { $0 != path }
        if preferences.defaultKeychain == path { updated.defaultKeychain = nil }
        if updated != preferences { try FileKeychains.save(updated, home) }
    }
}

/// Unlocks a keychain (nil: the default) with its password; `errSecAuthFailed` if it is wrong.
///
/// With `usePassword` false the system would ask the user; here that is
/// `errSecInteractionNotAllowed` unless the keychain has no password.
@discardableResult
public func SecKeychainUnlock(_ keychain: SecKeychain?, _ passwordLength: UInt32, _ password: UnsafeRawPointer?,
                              _ usePassword: Bool) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let database = try FileKeychains.database(keychain)
        var secret = usePassword ? bytes(password, passwordLength) : []
        defer { zeroize(&secret) }
        if !usePassword {
            guard !(try engine { () throws(StoreError) in try database.currentStatus() }).hasPassword else {
                throw SecStatusError(errSecInteractionNotAllowed, "there is no dialog to ask for the password")
            }
            return
        }
        try engine { () throws(StoreError) in try database.unlock(password: secret) }
    }
}

/// Locks a keychain (nil: the default): its when-unlocked items become unreadable until it is
/// unlocked again. A keychain without a password stays unlocked.
@discardableResult
public func SecKeychainLock(_ keychain: SecKeychain?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let database = try FileKeychains.database(keychain)
        try engine { () throws(StoreError) in try database.lockKeychain() }
    }
}

/// Locks every keychain this process has open.
@discardableResult
public func SecKeychainLockAll() -> OSStatus {
    secCall { () throws(SecStatusError) in try engine { () throws(StoreError) in try Backends.lockAll() } }
}

/// The keychain's state: `kSecUnlockStateStatus`, `kSecReadPermStatus`, `kSecWritePermStatus`.
@discardableResult
public func SecKeychainGetStatus(_ keychain: SecKeychain?, _ keychainStatus: UnsafeMutablePointer<SecKeychainStatus>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let database = try FileKeychains.database(keychain)
        var status: SecKeychainStatus = 0
        if try engine({ () throws(StoreError) in try database.currentStatus() }).isUnlocked { status |= kSecUnlockStateStatus }
        if access(database.path, R_OK) == 0 { status |= kSecReadPermStatus }
        if access(database.path, W_OK) == 0 { status |= kSecWritePermStatus }
        keychainStatus.pointee = status
    }
}

/// Copies the keychain's path, NUL-terminated, into `pathName` (`ioPathLength` bytes long); sets
/// `ioPathLength` to the path's length. `errSecBufferTooSmall` if it does not fit.
@discardableResult
public func SecKeychainGetPath(_ keychain: SecKeychain?, _ ioPathLength: UnsafeMutablePointer<UInt32>,
                               _ pathName: UnsafeMutablePointer<CChar>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (home, preferences) = try FileKeychains.preferences()
        let path = Array((keychain?.path ?? preferences.defaultPath(home)).utf8)
        guard path.count < Int(ioPathLength.pointee) else {
            ioPathLength.pointee = UInt32(path.count)
            throw SecStatusError(errSecBufferTooSmall, "the buffer is too small for the path")
        }
        for (i, byte) in path.enumerated() { pathName[i] = CChar(bitPattern: byte) }
        pathName[path.count] = 0
        ioPathLength.pointee = UInt32(path.count)
    }
}

/// The default keychain, where items are added when a call names no keychain.
@discardableResult
public func SecKeychainCopyDefault(_ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (home, preferences) = try FileKeychains.preferences()
        keychain.pointee = SecKeychain(path: preferences.defaultPath(home))
    }
}

/// Makes a keychain the default (nil: the login keychain again).
@discardableResult
public func SecKeychainSetDefault(_ keychain: SecKeychain?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (home, preferences) = try FileKeychains.preferences()
        if let keychain {
            _ = try FileKeychains.database(keychain)  // must be a keychain
        }
        var updated = preferences
        updated.defaultKeychain = keychain.map(\.path).flatMap { $0 == home.defaultKeychainPath ? nil : $0 }
        try FileKeychains.save(updated, home)
    }
}

/// The search list: the keychains searched when a call names none, in order.
@discardableResult
public func SecKeychainCopySearchList(_ searchList: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (home, preferences) = try FileKeychains.preferences()
        searchList.pointee = NSArray(array: preferences.searchPaths(home).map(SecKeychain.init(path:)))
    }
}

/// Replaces the search list with an array of keychains.
@discardableResult
public func SecKeychainSetSearchList(_ searchList: CFArray) -> OSStatus {
    secCall { () throws(SecStatusError) in
        var paths: [String] = []
        for element in searchList {
            guard let keychain = element as? SecKeychain else { throw .param("the search list holds something that is not a keychain") }
            paths.append(keychain.path)
        }
        let (home, preferences) = try FileKeychains.preferences()
        var updated = preferences
        updated.searchList = paths
        try FileKeychains.save(updated, home)
    }
}

/// The keychain's lock settings. Set `version` to `SEC_KEYCHAIN_SETTINGS_VERS1` first.
@discardableResult
public func SecKeychainCopySettings(_ keychain: SecKeychain?, _ outSettings: UnsafeMutablePointer<SecKeychainSettings>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        guard outSettings.pointee.version == SEC_KEYCHAIN_SETTINGS_VERS1 else { throw .param("unknown settings version") }
        let database = try FileKeychains.database(keychain)
        let settings = try engine { () throws(StoreError) in try database.currentLockSettings() }
        outSettings.pointee = SecKeychainSettings(version: SEC_KEYCHAIN_SETTINGS_VERS1, lockOnSleep: DarwinBoolean(settings.lockOnSleep),
                                                  useLockInterval: DarwinBoolean(settings.useLockInterval),
                                                  lockInterval: settings.lockInterval)
    }
}

/// Changes the keychain's lock settings: with `useLockInterval`, it locks after `lockInterval`
/// seconds without a call, in every process that has it open.
@discardableResult
public func SecKeychainSetSettings(_ keychain: SecKeychain?, _ newSettings: UnsafePointer<SecKeychainSettings>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let settings = newSettings.pointee
        guard settings.version == SEC_KEYCHAIN_SETTINGS_VERS1 else { throw .param("unknown settings version") }
        let database = try FileKeychains.database(keychain)
        try engine { () throws(StoreError) in
            try database.setLockSettings(LockSettings(lockOnSleep: settings.lockOnSleep.boolValue,
                                                      useLockInterval: settings.useLockInterval.boolValue,
                                                      lockInterval: settings.lockInterval))
        }
    }
}

/// Whether keychain functions may show a dialog: with `false`, a call through the agent that would
/// need a prompt (a program not trusted by an item's access object, an access group not granted)
/// fails at once with `errSecInteractionNotAllowed`. The embedded engine never prompts.
@discardableResult
public func SecKeychainSetUserInteractionAllowed(_ state: Bool) -> OSStatus {
    AccessGroupConfiguration.interactionAllowed.withLock { $0 = state }
    return errSecSuccess
}

/// See ``SecKeychainSetUserInteractionAllowed(_:)``.
@discardableResult
public func SecKeychainGetUserInteractionAllowed(_ state: UnsafeMutablePointer<DarwinBoolean>) -> OSStatus {
    state.pointee = DarwinBoolean(AccessGroupConfiguration.interactionAllowed.withLock { $0 })
    return errSecSuccess
}
