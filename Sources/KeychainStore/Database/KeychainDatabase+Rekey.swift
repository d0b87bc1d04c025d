import Crypto
import FoundationEssentials

/// Replacing a keychain's keys: on every password change (so an old copy of the file and the
/// old password open nothing written since), when a format-1 file is migrated, and, every key at
/// once, whenever a bound keychain's sealed secret changes (docs/tpm.md).
extension KeychainDatabase.Session {
    /// Which keys a re-key replaces.
    enum Renewal {
        /// The password-protected class keys (every class but `dk` and `dku`).
        case passwordProtected
        /// Every class key and the index key, with every search column's keyed hash: what a
        /// new device key (binding, freeing, a bound keychain's new seal) needs, so that a copy
        /// from before, spliced into one from after, opens and answers nothing.
        case every
    }

    /// Replaces the keys `renewal` names with fresh ones, re-encrypts the item rows under them for
    /// the current format (each metadata blob anew, each secret's item key re-wrapped: no secret
    /// is decrypted; with a new index key, each search column hashed anew), and writes the keybag
    /// (the live layout, no password-only rows, under this session's device key) and the header
    /// under a new epoch. Runs inside the caller's transaction, so it happens whole or not at all.
    /// Returns the new keys.
    func rekey(_ old: [String: SymmetricKey], kdf newKDF: PasswordKDF?, passwordKey: SymmetricKey?,
               renewing renewal: Renewal = .passwordProtected) throws(StoreError) -> [String: SymmetricKey] {
        var new = old
        for name in old.keys {
            let keyClass = KeyClass(rawValue: name)
            if renewal == .every || keyClass?.isPasswordProtected == true { new[name] = KeychainCrypto.randomKey() }
        }
        let passcodeClass = KeyClass.whenPasscodeSetThisDeviceOnly.rawValue
        if newKDF != nil, new[passcodeClass] == nil { new[passcodeClass] = KeychainCrypto.randomKey() }
        if newKDF == nil {
            new[passcodeClass] = nil
            try deleteItems(of: [.whenPasscodeSetThisDeviceOnly])
        }
        guard let index = new[Keybag.indexKeyName] else { throw StoreError(.internalError, "no index key") }
        var renewed: Self?
        if renewal == .every {
            renewed = self
            renewed?.keys = UnlockedKeys(new, hasPassword: newKDF != nil)
            try connection.execute("DELETE FROM genp_ssattr")
        }
        try reseal(from: Self.classKeys(old), to: Self.classKeys(new), indexing: renewed)
        try Keybag.write(new, in: connection, keychainID: keychainID, deviceKey: deviceKey, passwordKey: passwordKey)
        try KeychainFile.writeHeader(connection, id: keychainID, kdf: newKDF, settings: settings, epoch: epoch + 1, index: index)
        return new
    }

    /// After a successful re-key: the new keys, unlocked, and the file's old pages overwritten
    /// (`secure_delete` zeroed them in the log; the checkpoint moves that into the file and
    /// empties the log, so the old wrapped keys and blobs are gone from both).
    mutating func adopt(rekeyed keys: [String: SymmetricKey], kdf newKDF: PasswordKDF?, passwordKey: SymmetricKey?) {
        self.keys = UnlockedKeys(keys, hasPassword: newKDF != nil)
        lock = .opened(kdf: newKDF, passwordKey: passwordKey)
        format = KeychainSchema.formatVersion
        epoch += 1
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        dataVersion = try? KeychainDatabase.dataVersion(connection)
    }

    /// Migrates a format-1 file to the current format; every key must be in memory (no password,
    /// or unlocked). Its class keys are replaced too: a format-1 file kept password-only copies of
    /// them, which an old copy of the file still has.
    mutating func migrate() throws(StoreError) {
        guard format < KeychainSchema.formatVersion else { return }
        let old = try allKeys(passwordKey: passwordKey)
        let current = kdf, key = passwordKey
        let keys = try writeTransaction { () throws(StoreError) in try rekey(old, kdf: current, passwordKey: key) }
        adopt(rekeyed: keys, kdf: current, passwordKey: key)
    }

    /// Re-encrypts every row whose class key changes (every row, when the format changes). With
    /// `indexing` (a session holding the new keys), every row's search columns and Secret Service
    /// lookup hashes are written anew under its index key.
    private func reseal(from old: [KeyClass: ClassKeys], to new: [KeyClass: ClassKeys], indexing: Self?) throws(StoreError) {
        for itemClass in ItemClass.allCases {
            let table = itemClass.rawValue
            let rows = try connection.prepare("SELECT rowid, persistref, keyclass, tomb, metadata, secret FROM \(table)").rows()
            let columns = indexing == nil ? [] : itemClass.schema.attributes.map(\.column)
            let assignments = (["metadata", "secret"] + columns).map { "\($0) = ?" }.joined(separator: ", ")
            let update = try connection.prepare("UPDATE \(table) SET \(assignments) WHERE rowid = ?")
            for row in rows {
                guard let (metadata, values) = try resealed(row, table: table, from: old, to: new, everyRow: indexing != nil) else { continue }
                guard let indexing, let rowID = row[0].integer else {
                    try update.run(values)
                    continue
                }
                try update.run(values.dropLast() + (try indexing.columnValues(itemClass, metadata.attributes)) + [.integer(rowID)])
                if itemClass == .genericPassword {
                    let name = SecretServiceAttributes.attributeName
                    try indexing.writeSecretAttributes(row: rowID, old: nil, new: metadata.attributes[name])
                }
            }
        }
    }

    /// A row's metadata and new `metadata, secret, rowid`, or nil when it stays as it is (its key
    /// does not change and `everyRow` is false, or it is damaged: it opened under no key before
    /// and will not after).
    private func resealed(_ row: [SQLiteValue], table: String, from old: [KeyClass: ClassKeys], to new: [KeyClass: ClassKeys],
                          everyRow: Bool) throws(StoreError) -> (ItemMetadata, [SQLiteValue])? {
        guard let rowID = row[0].integer, let persistentID = row[1].blob, let name = row[2].text,
              let keyClass = KeyClass(rawValue: name), let tomb = row[3].integer, let sealed = row[4].blob,
              let oldKeys = old[keyClass], let newKeys = new[keyClass] else { return nil }
        let rotated = !oldKeys.isSame(as: newKeys)
        guard rotated || everyRow || format < KeychainSchema.formatVersion else { return nil }
        let before = RowCipher(table: table, persistentID: persistentID, keyClass: keyClass, tombstone: tomb != 0, format: format)
        let after = RowCipher(table: table, persistentID: persistentID, keyClass: keyClass, tombstone: tomb != 0)
        guard let metadata = try? before.openMetadata(sealed, keys: oldKeys) else { return nil }
        var secret = row[5]
        if case .blob(let blob) = row[5], rotated {
            guard let rewrapped = try? RowCipher.rewrapSecret(blob, from: oldKeys, to: newKeys) else { return nil }
            secret = .blob(rewrapped)
        }
        return (metadata, [.blob(try after.sealMetadata(metadata, keys: newKeys)), secret, .integer(rowID)])
    }

    private static func classKeys(_ keys: [String: SymmetricKey]) -> [KeyClass: ClassKeys] {
        var result: [KeyClass: ClassKeys] = [:]
        for (name, key) in keys { if let keyClass = KeyClass(rawValue: name) { result[keyClass] = ClassKeys(classKey: key) } }
        return result
    }
}

extension KeychainDatabase.Session {
    /// A write transaction that refuses to commit rows sealed under keys another process has
    /// replaced meanwhile (they would open under no key in the file): `.interactionNotAllowed`,
    /// nothing written; the next call follows the new keys (``refresh()``).
    func writeTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try connection.transaction(immediate: true) { () throws(StoreError) -> T in
            let current = try KeychainDatabase.dataVersion(connection)
            if current != dataVersion, try KeychainFile.readHeader(connection).epoch != epoch {
                throw StoreError(.interactionNotAllowed, "another process replaced the keychain's keys; try again")
            }
            return try body()
        }
    }

    /// Follows what another process committed: new keys (a password change, a binding to the TPM
    /// or its end, a migration there) leave this process the state a restart would (unlock again
    /// with the new password); new lock settings apply here too. One `PRAGMA data_version` a call
    /// when nothing changed, and one header read when another process wrote items; the header's
    /// MAC is checked only when it says something new (nothing unverified is taken up). A foreign
    /// keychain takes up nothing until the unlock that adopts it.
    mutating func refresh() throws(StoreError) {
        let current = try KeychainDatabase.dataVersion(connection)
        guard current != dataVersion else { return }
        dataVersion = current
        guard !lock.isForeign else { return }
        let header = try KeychainFile.readHeader(connection)
        let rekeyed = header.epoch != epoch || header.format != format || header.kdf != kdf || header.sealed != binding.seal
        guard rekeyed || header.settings != settings else { return }
        guard rekeyed else {
            if let index = keys.index { try HeaderSeal.verify(header, index: index) }
            settings = header.settings
            return
        }
        try follow(header)
    }

    /// Takes up new keys another process wrote, as ``KeychainFile/open(path:home:)`` does: a
    /// keychain bound with a password seals (every key dropped until its password unseals it); one
    /// bound without keeps the secret unsealed here while its seal is the same, else unseals the
    /// new one; an unbound one opens with this home's device key. The header is checked with the
    /// index key its new keybag holds: binding and freeing replace the index key too.
    private mutating func follow(_ header: KeychainFile.Header) throws(StoreError) {
        let next: TPMBinding
        switch header.sealed {
        case let seal? where header.kdf != nil:
            (keys, binding, lock) = (UnlockedKeys([:], hasPassword: true), .sealed(seal), LockState(kdf: header.kdf, foreign: false))
            (settings, format, epoch) = (header.settings, header.format, header.epoch)
            return
        case let seal?:
            if case .unsealed(seal, _) = binding {
                next = binding
            } else {
                next = .unsealed(seal, deviceKey: try HardwareBinding.open(seal, deviceKey: homeDeviceKey, passwordKey: nil, keychainID: keychainID))
            }
        case nil:
            next = .unbound
        }
        let opened = try Keybag.open(.device, in: connection, keychainID: keychainID, format: header.format,
                                     deviceKey: next.deviceKey ?? homeDeviceKey, passwordKey: nil)
        guard let index = opened.keys[Keybag.indexKeyName] else { throw StoreError(.decode, "the keybag has no key for this machine") }
        try HeaderSeal.verify(header, index: index)
        (keys, binding, lock) = (UnlockedKeys(opened, hasPassword: header.kdf != nil), next, LockState(kdf: header.kdf, foreign: false))
        (settings, format, epoch) = (header.settings, header.format, header.epoch)
    }
}

extension KeychainDatabase {
    /// SQLite's `PRAGMA data_version` of a connection.
    static func dataVersion(_ connection: SQLiteConnection) throws(StoreError) -> Int64? {
        try connection.prepare("PRAGMA data_version").rows().first?.first?.integer
    }
}
