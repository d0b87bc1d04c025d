import Crypto
import FoundationEssentials

/// Binding a keychain to the TPM and freeing it again (`keyhaven set-keychain-settings --tpm`,
/// `--no-tpm`; docs/tpm.md).
extension KeychainDatabase {
    /// Binds the keychain to the TPM (`bound`) or frees it (`!bound`): a new sealed secret, or
    /// none, and every key replaced (the class keys and the index key) and every row re-encrypted
    /// and re-indexed under the new device key, in one transaction
    /// (``Session/rekey(_:kdf:passwordKey:renewing:)``), so a copy made before opens nothing
    /// written after, and answers nothing of it spliced into a later copy. A keychain with a password needs it (`.authFailed` if wrong), bound or not;
    /// one already so is left as it is.
    package func setBound(_ bound: Bool, password: [UInt8]) throws(StoreError) {
        let kdf = try withSession { $0.kdf }
        if kdf == nil && !password.isEmpty { throw StoreError(.authFailed, "the keychain has no password") }
        let passwordKey = try kdf.map { (kdf: PasswordKDF) throws(StoreError) in try kdf.deriveKey(from: password) }  // slow: outside the lock
        try withSession { session throws(StoreError) in
            guard session.kdf == kdf else { throw StoreError(.authFailed, "the password changed meanwhile; try again") }
            guard !session.lock.isForeign else { throw StoreError(.interactionNotAllowed, "unlock the keychain on this machine first") }
            guard (session.binding.seal != nil) != bound else { return }
            try session.unsealChecking(passwordKey: passwordKey)
            let keys = try session.allKeys(passwordKey: passwordKey)
            let (sealed, deviceKey) = bound
                ? try HardwareBinding.bind(deviceKey: session.homeDeviceKey, passwordKey: passwordKey, keychainID: session.keychainID)
                : (nil, session.homeDeviceKey)
            var next = session
            next.binding = sealed.map { .unsealed($0, deviceKey: deviceKey) } ?? .unbound
            let writer = next
            let rekeyed = try session.writeTransaction { () throws(StoreError) in
                try KeychainFile.writeSeal(writer.connection, sealed)
                return try writer.rekey(keys, kdf: kdf, passwordKey: passwordKey, renewing: .every)
            }
            session.binding = writer.binding
            session.adopt(rekeyed: rekeyed, kdf: kdf, passwordKey: passwordKey)
        }
    }
}
