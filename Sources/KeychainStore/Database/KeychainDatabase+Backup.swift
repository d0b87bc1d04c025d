#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

extension KeychainDatabase {
    /// Writes a backup of the keychain to `destination` (0600; `.duplicateKeychain` if a file is
    /// there): a keychain file that opens with the password alone, on any machine.
    ///
    /// It holds the migratable items and their keys wrapped under the password key alone: no
    /// ThisDeviceOnly item and no key wrapped by this machine's device key. Needs a password (a
    /// backup of a keychain without one could never be opened elsewhere), that password
    /// (`.authFailed` if wrong), and the keychain unlocked. A bound keychain's password is checked
    /// by the TPM, which counts a wrong one: a backup is the one way out of the binding (its
    /// password alone opens it), so it is never a way around the TPM's count.
    package func backup(to destination: String, password: [UInt8]) throws(StoreError) {
        guard FileSecurity.fileSize(destination) == nil else {
            throw StoreError(.duplicateKeychain, "a file already exists at \(destination)")
        }
        guard let kdf = try withSession({ $0.kdf }) else {
            throw StoreError(.invalidParameter, "a keychain without a password cannot be backed up; set a password first")
        }
        let given = try kdf.deriveKey(from: password)  // slow: outside the lock
        let temporary = destination + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        defer { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) } }
        let (keychainID, keys, passwordKey) = try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            // The backup's keys are wrapped under the password key, which is in memory only while
            // the keychain is unlocked (the live file keeps no password-only copy of them).
            guard let passwordKey = session.passwordKey, session.format >= KeychainSchema.formatVersion else {
                throw StoreError(.interactionNotAllowed, "unlock the keychain to back it up")
            }
            try session.verify(passwordKey: given)
            let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileSecurity.error(errno, "cannot create \(temporary)") }
            close(fd)
            try session.connection.prepare("VACUUM INTO ?").run([.text(temporary)])
            return (session.keychainID, session.keys.all, passwordKey)
        }
        let copy = try SQLiteConnection(path: temporary, create: false)
        try copy.execute("PRAGMA secure_delete = ON; PRAGMA journal_mode = DELETE")
        try copy.transaction(immediate: true) { () throws(StoreError) in
            for itemClass in ItemClass.allCases {
                try copy.execute("DELETE FROM \(itemClass.rawValue) WHERE keyclass IN ('aku', 'cku', 'dku', 'akpu')")
            }
            try Keybag.writeBackup(keys, in: copy, keychainID: keychainID, passwordKey: passwordKey)
            // A backup travels: it is never bound to this machine's TPM (its password alone opens it).
            try KeychainFile.writeSeal(copy, nil)
        }
        try copy.execute("VACUUM; PRAGMA journal_mode = WAL")
        if link(temporary, destination) != 0 {
            if errno == EEXIST { throw StoreError(.duplicateKeychain, "a file already exists at \(destination)") }
            throw FileSecurity.error(errno, "cannot create \(destination)")
        }
    }
}
