import Crypto
import FoundationEssentials

/// The lock model: passwords, unlocking, locking, settings (ARCHITECTURE.md's table).
extension KeychainDatabase {
    /// What `SecKeychainGetStatus` reports.
    package typealias Status = KeychainStatus

    package func status() -> Status {
        (try? withSession { session in
            Status(hasPassword: session.kdf != nil, isUnlocked: session.lock.isUnlocked, isForeign: session.lock.isForeign,
                   isBound: session.binding.seal != nil)
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
            if session.lock.isForeign {
                try session.adopt(passwordKey: passwordKey)
            } else {
                try session.unseal(passwordKey: passwordKey)
                let locking = try Keybag.open(.devicePassword, in: session.connection, keychainID: session.keychainID,
                                              format: session.format, deviceKey: session.deviceKey, passwordKey: passwordKey)
                session.keys.insertClassKeys(locking)
            }
            session.lock = .unlocked(kdf, passwordKey: passwordKey)
            // A format-1 keychain migrates at its first unlock, when every key is in memory; one
            // this process cannot write is used as it is.
            if session.format < KeychainSchema.formatVersion, session.keys.damaged.isEmpty { try? session.migrate() }
        }
    }

    /// Whether `password` is the keychain's (`.authFailed` if not): the agent's prompts ask for it
    /// before they allow a program in. Nothing changes, the lock state neither.
    package func verifyPassword(_ password: [UInt8]) throws(StoreError) {
        guard let kdf = try currentKDF() else { throw StoreError(.authFailed, "the keychain has no password") }
        let passwordKey = try kdf.deriveKey(from: password)  // slow: outside the lock
        try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            try session.verify(passwordKey: passwordKey)
        }
    }

    /// Locks: drops the keys of the classes that need the keychain unlocked. A keychain without a
    /// password cannot be locked (a device without a passcode).
    package func lock() {
        _ = try? withSession { session in session.lockClasses() }
    }

    /// Sets, changes or removes (`new` empty) the password. `old` must be the current one (empty
    /// when there is none). Replaces the password-protected class keys and re-encrypts their items
    /// (``Session/rekey(_:kdf:passwordKey:renewing:)``), all or nothing, so an old copy of the file
    /// and the old password open nothing written since. Removing the password deletes the items
    /// that need one (`akpu`). A bound keychain gets a new random secret sealed under the new
    /// password and every key replaced: a secret unsealed before (under the old password, or none)
    /// opens nothing written after, so it cannot test guesses of the new password offline.
    package func changePassword(old: [UInt8], new: [UInt8]) throws(StoreError) {
        let kdf = try currentKDF()
        let oldKey = try kdf.map { (kdf: PasswordKDF) throws(StoreError) in try kdf.deriveKey(from: old) }
        if kdf == nil && !old.isEmpty { throw StoreError(.authFailed, "the keychain has no password") }
        let newKDF = new.isEmpty ? nil : try PasswordKDF.calibrated()
        let newKey = try newKDF.map { (kdf: PasswordKDF) throws(StoreError) in try kdf.deriveKey(from: new) }
        try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            guard !session.lock.isForeign else { throw StoreError(.interactionNotAllowed, "unlock the keychain on this machine first") }
            // A bound keychain: the TPM checks the old password, then a new secret is sealed under the new one.
            try session.unsealChecking(passwordKey: oldKey)
            let keys = try session.allKeys(passwordKey: oldKey)
            let rebound = try session.binding.seal.map { (_) throws(StoreError) in
                try HardwareBinding.bind(deviceKey: session.homeDeviceKey, passwordKey: newKey, keychainID: session.keychainID)
            }
            var next = session
            if let rebound { next.binding = .unsealed(rebound.sealed, deviceKey: rebound.deviceKey) }
            let writer = next
            let rekeyed = try session.writeTransaction { () throws(StoreError) in
                if let rebound { try KeychainFile.writeSeal(writer.connection, rebound.sealed) }
                return try writer.rekey(keys, kdf: newKDF, passwordKey: newKey, renewing: rebound == nil ? .passwordProtected : .every)
            }
            session.binding = writer.binding
            session.adopt(rekeyed: rekeyed, kdf: newKDF, passwordKey: newKey)
        }
    }

    /// Locks when its settings say to lock when the screen locks or the system sleeps (Apple's
    /// `lockOnSleep`); whether it locked now.
    package func lockForScreenOrSleep() -> Bool {
        (try? withSession { session in
            guard session.settings.lockOnSleep, case .unlocked = session.lock else { return false }
            session.lockClasses()
            return true
        }) ?? false
    }

    /// The keychain's lock settings.
    package func lockSettings() -> LockSettings {
        (try? withSession { $0.settings }) ?? LockSettings()
    }

    /// Stores new lock settings and applies them.
    package func setLockSettings(_ settings: LockSettings) throws(StoreError) {
        try withSession { session throws(StoreError) in
            if session.format < KeychainSchema.formatVersion {
                try session.connection.prepare("INSERT OR REPLACE INTO keychain(name, value) VALUES ('settings', ?)")
                    .run([.blob(Data(settings.encoded))])
            } else {
                guard let index = session.keys.index else { throw StoreError(.interactionNotAllowed, "unlock the keychain on this machine first") }
                let (id, kdf, epoch) = (session.keychainID, session.kdf, session.epoch)
                try session.writeTransaction { () throws(StoreError) in
                    try KeychainFile.writeHeader(session.connection, id: id, kdf: kdf, settings: settings, epoch: epoch, index: index)
                }
            }
            session.settings = settings
        }
        scheduleAutoLock(settings)
    }

    /// The password parameters as the file has them now (another process may have changed them).
    private func currentKDF() throws(StoreError) -> PasswordKDF? {
        // Another process may have set, changed or removed the password: withSession follows it.
        try withSession { $0.kdf }
    }
}

extension KeychainDatabase.Session {
    /// Whether `passwordKey` is the password's (`.authFailed` if not): a bound keychain's is the
    /// TPM's to check (and count); any other's, its keybag's.
    func verify(passwordKey: SymmetricKey) throws(StoreError) {
        if let seal = binding.seal {
            _ = try HardwareBinding.open(seal, deviceKey: homeDeviceKey, passwordKey: passwordKey, keychainID: keychainID)
            return
        }
        let foreign = lock.isForeign
        _ = try Keybag.open(foreign ? .password : .devicePassword, in: connection, keychainID: keychainID, format: format,
                            deviceKey: foreign ? nil : deviceKey, passwordKey: passwordKey)
    }

    /// A bound keychain's password checked by the TPM (which counts a wrong one) before its keys
    /// are replaced: the seal opened again when it is unsealed already, else unsealed. Nothing for
    /// any other keychain, whose keybag checks the password when its keys are read.
    mutating func unsealChecking(passwordKey: SymmetricKey?) throws(StoreError) {
        if case .unsealed(let seal, _) = binding {
            _ = try HardwareBinding.open(seal, deviceKey: homeDeviceKey, passwordKey: passwordKey, keychainID: keychainID)
        } else {
            try unseal(passwordKey: passwordKey)
        }
    }

    /// A bound keychain still sealed (with a password, locked): the password unseals the TPM's
    /// secret, which opens the device rows; the header is checked then. Nothing for any other.
    mutating func unseal(passwordKey: SymmetricKey?) throws(StoreError) {
        guard case .sealed(let seal) = binding else { return }
        let device = try HardwareBinding.open(seal, deviceKey: homeDeviceKey, passwordKey: passwordKey, keychainID: keychainID)
        let opened = try Keybag.open(.device, in: connection, keychainID: keychainID, format: format, deviceKey: device, passwordKey: nil)
        guard let index = opened.keys[Keybag.indexKeyName] else { throw StoreError(.decode, "the bound keychain's keybag has no key for this machine") }
        try HeaderSeal.verify(try KeychainFile.readHeader(connection), index: index)
        keys = UnlockedKeys(opened, hasPassword: kdf != nil)
        binding = .unsealed(seal, deviceKey: device)
    }

    /// Every key of the keychain, opened with the device key and (when there is one) the password key.
    /// Refused while any class key is damaged: rewriting the keybag would drop it for good.
    func allKeys(passwordKey: SymmetricKey?) throws(StoreError) -> [String: SymmetricKey] {
        var opened = try Keybag.open(.device, in: connection, keychainID: keychainID, format: format, deviceKey: deviceKey, passwordKey: nil)
        if let passwordKey {
            let locking = try Keybag.open(.devicePassword, in: connection, keychainID: keychainID, format: format,
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

    /// Takes over a keychain made on another machine, a backup (see
    /// ``KeychainDatabase/unlock(password:)``): its header is checked, then its keys are wrapped
    /// for this machine only (the live layout keeps no password-only row).
    mutating func adopt(passwordKey: SymmetricKey) throws(StoreError) {
        let travels = try connection.prepare("SELECT count(*) FROM keybag WHERE protection = 'password'").rows().first?.first?.integer ?? 0
        guard travels > 0 else {
            throw StoreError(.decode, "this keychain opens only on the machine that made it; to move it, make a backup there with `keyhaven backup-keychain` (SecKeychainBackup) and unlock that here")
        }
        let opened = try Keybag.open(.password, in: connection, keychainID: keychainID, format: format, deviceKey: nil, passwordKey: passwordKey)
        guard opened.damaged.isEmpty, let index = opened.keys[Keybag.indexKeyName] else {
            throw StoreError(.decode, "the keybag is damaged; the keychain cannot be adopted")
        }
        let header = try KeychainFile.readHeader(connection)
        try HeaderSeal.verify(header, index: index)
        settings = header.settings
        var keys = opened.keys
        let deviceOnly: [KeyClass] = [.whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly,
                                      .whenPasscodeSetThisDeviceOnly]
        for keyClass in deviceOnly { keys[keyClass.rawValue] = KeychainCrypto.randomKey() }
        let adopted = keys
        try connection.transaction(immediate: true) { () throws(StoreError) in
            try deleteItems(of: deviceOnly)
            // In the file's own format: a format-1 copy is migrated right after, by the unlock.
            try Keybag.write(adopted, in: connection, keychainID: keychainID, deviceKey: deviceKey, passwordKey: passwordKey, format: format)
        }
        self.keys = UnlockedKeys(adopted, hasPassword: true)
        if case .foreign(let kdf) = lock { lock = .locked(kdf) }
        dataVersion = try KeychainDatabase.dataVersion(connection)
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
