import Crypto
import FoundationEssentials

/// The lock model: passwords, unlocking, locking, settings (ARCHITECTURE.md's table).
extension KeychainDatabase {
    /// What `SecKeychainGetStatus` reports.
    package typealias Status = KeychainStatus

    package func status() -> Status {
        (try? withSession { session in
            Status(hasPassword: session.kdf != nil, isUnlocked: session.unlocked, isForeign: session.foreign)
        }) ?? Status(hasPassword: false, isUnlocked: false, isForeign: false)
    }

    /// Unlocks with the password (`.authFailed` if it is wrong; nothing changes). On a machine
    /// whose device key does not open the keychain, the password adopts it: the migratable keys
    /// are re-wrapped for this machine and the items that belonged to the other machine only
    /// (ThisDeviceOnly) are deleted, as a restore to a new device leaves them behind.
    package func unlock(password: [UInt8]) throws(StoreError) {
        guard let kdf = try currentKDF() else {
            guard password.isEmpty else { throw StoreError(.authFailed, "the keychain has no password") }
            return
        }
        let passwordKey = try kdf.deriveKey(from: password)  // slow: outside the lock
        try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            if session.foreign {
                try session.adopt(passwordKey: passwordKey)
            } else {
                let locking = try Keybag.open(.devicePassword, in: session.connection, keychainID: session.keychainID,
                                              deviceKey: session.deviceKey, passwordKey: passwordKey)
                session.keys.insertClassKeys(locking)
            }
            session.unlocked = true
        }
    }

    /// Locks: drops the keys of the classes that need the keychain unlocked. A keychain without a
    /// password cannot be locked (a device without a passcode).
    package func lock() {
        _ = try? withSession { session in session.lockClasses() }
    }

    /// Sets, changes or removes (`new` empty) the password. `old` must be the current one (empty
    /// when there is none). Re-wraps the class keys; items are not re-encrypted. Removing the
    /// password deletes the items that need one (`akpu`).
    package func changePassword(old: [UInt8], new: [UInt8]) throws(StoreError) {
        let kdf = try currentKDF()
        let oldKey = try kdf.map { (kdf: PasswordKDF) throws(StoreError) in try kdf.deriveKey(from: old) }
        if kdf == nil && !old.isEmpty { throw StoreError(.authFailed, "the keychain has no password") }
        let newKDF = new.isEmpty ? nil : try PasswordKDF.calibrated()
        let newKey = try newKDF.map { (kdf: PasswordKDF) throws(StoreError) in try kdf.deriveKey(from: new) }
        try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            guard !session.foreign else { throw StoreError(.interactionNotAllowed, "unlock the keychain on this machine first") }
            var keys = try session.allKeys(passwordKey: oldKey)
            try session.connection.transaction(immediate: true) { () throws(StoreError) in
                let header = try session.connection.prepare("INSERT OR REPLACE INTO keychain(name, value) VALUES ('kdf', ?)")
                if let newKDF {
                    if keys[KeyClass.whenPasscodeSetThisDeviceOnly.rawValue] == nil {
                        keys[KeyClass.whenPasscodeSetThisDeviceOnly.rawValue] = KeychainCrypto.randomKey()
                    }
                    try header.run([.blob(newKDF.encoded)])
                } else {
                    keys[KeyClass.whenPasscodeSetThisDeviceOnly.rawValue] = nil
                    try session.deleteItems(of: [.whenPasscodeSetThisDeviceOnly])
                    try session.connection.execute("DELETE FROM keychain WHERE name = 'kdf'")
                }
                try Keybag.write(keys, in: session.connection, keychainID: session.keychainID,
                                 deviceKey: session.deviceKey, passwordKey: newKey)
            }
            session.keys = UnlockedKeys(keys, hasPassword: newKDF != nil)
            session.kdf = newKDF
            session.unlocked = true
        }
    }

    /// The keychain's lock settings.
    package func lockSettings() -> LockSettings {
        (try? withSession { $0.settings }) ?? LockSettings()
    }

    /// Stores new lock settings and applies them.
    package func setLockSettings(_ settings: LockSettings) throws(StoreError) {
        try withSession { session throws(StoreError) in
            try session.connection.prepare("INSERT OR REPLACE INTO keychain(name, value) VALUES ('settings', ?)")
                .run([.blob(Data(settings.encoded))])
            session.settings = settings
        }
        scheduleAutoLock(settings)
    }

    /// The password parameters as the file has them now (another process may have changed them).
    private func currentKDF() throws(StoreError) -> PasswordKDF? {
        try withSession { session throws(StoreError) in
            let kdf = try KeychainFile.readHeader(session.connection).kdf
            if kdf != session.kdf {
                // Another process set, changed or removed the password: start from the file's state.
                session.kdf = kdf
                session.keys.hasPassword = kdf != nil
                if kdf == nil { session.unlocked = true }
            }
            return kdf
        }
    }
}

extension KeychainDatabase.Session {
    /// Every key of the keychain, opened with the device key and (when there is one) the password key.
    /// Refused while any class key is damaged: rewriting the keybag would drop it for good.
    func allKeys(passwordKey: SymmetricKey?) throws(StoreError) -> [String: SymmetricKey] {
        var opened = try Keybag.open(.device, in: connection, keychainID: keychainID, deviceKey: deviceKey, passwordKey: nil)
        if let passwordKey {
            let locking = try Keybag.open(.devicePassword, in: connection, keychainID: keychainID,
                                          deviceKey: deviceKey, passwordKey: passwordKey)
            opened.keys.merge(locking.keys) { _, new in new }
            opened.damaged.formUnion(locking.damaged)
        }
        guard opened.damaged.isEmpty else {
            throw StoreError(.decode, "the keybag is damaged (\(opened.damaged.map(\.rawValue).sorted().joined(separator: ", "))); "
                                       + "its password cannot be changed")
        }
        return opened.keys
    }

    /// Takes over a keychain made on another machine (see ``KeychainDatabase/unlock(password:)``).
    mutating func adopt(passwordKey: SymmetricKey) throws(StoreError) {
        let opened = try Keybag.open(.password, in: connection, keychainID: keychainID, deviceKey: nil, passwordKey: passwordKey)
        guard opened.damaged.isEmpty else { throw StoreError(.decode, "the keybag is damaged; the keychain cannot be adopted") }
        var keys = opened.keys
        let deviceOnly: [KeyClass] = [.whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly,
                                      .whenPasscodeSetThisDeviceOnly]
        for keyClass in deviceOnly { keys[keyClass.rawValue] = KeychainCrypto.randomKey() }
        let adopted = keys
        try connection.transaction(immediate: true) { () throws(StoreError) in
            try deleteItems(of: deviceOnly)
            try Keybag.write(adopted, in: connection, keychainID: keychainID, deviceKey: deviceKey, passwordKey: passwordKey)
        }
        self.keys = UnlockedKeys(adopted, hasPassword: true)
        foreign = false
    }

    /// Deletes every item of the given accessibility classes.
    func deleteItems(of keyClasses: [KeyClass]) throws(StoreError) {
        for itemClass in ItemClass.allCases {
            let placeholders = keyClasses.map { _ in "?" }.joined(separator: ", ")
            try connection.prepare("DELETE FROM \(itemClass.rawValue) WHERE keyclass IN (\(placeholders))")
                .run(keyClasses.map { .text($0.rawValue) })
        }
    }
}
