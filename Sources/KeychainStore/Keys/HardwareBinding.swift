import Crypto
import FoundationEssentials
import Synchronization

/// What seals a secret to this machine's hardware and opens it again: the TPM, which the agent
/// holds (KeyhavenAgent's `TPMSealer`). The engine knows only this shape.
package protocol HardwareSealer: Sendable {
    /// `secret` sealed so that only this hardware opens it, and only with `authorization`.
    func seal(_ secret: [UInt8], authorization: [UInt8]) throws(StoreError) -> Data
    /// The secret `sealed` holds. A wrong authorization is `.authFailed` (counted by the
    /// hardware); a lockout `.lockedOut`; a seal of other hardware `.decode`.
    func unseal(_ sealed: Data, authorization: [UInt8]) throws(StoreError) -> [UInt8]
}

/// Keychains bound to the TPM (docs/tpm.md, docs/file-format.md): the keychain's own secret,
/// sealed in the TPM, joins the device key in every key-encryption key, so the file and the
/// device key together open nothing without this TPM. With a password, the seal's authorization
/// derives from the password key: the TPM checks each password and counts the wrong ones.
package enum HardwareBinding {
    private static let installed = Mutex<(any HardwareSealer)?>(nil)

    /// The sealer this process uses (the agent installs the TPM's); without one, a bound
    /// keychain does not open here.
    package static func install(_ sealer: (any HardwareSealer)?) { installed.withLock { $0 = sealer } }

    static func sealer() throws(StoreError) -> any HardwareSealer {
        guard let sealer = installed.withLock({ $0 }) else {
            throw StoreError(.notAvailable, "the keychain is bound to the TPM, which only the agent (keyhavend) opens")
        }
        return sealer
    }

    /// The seal's authorization: 32 bytes from the password key, bound to the keychain; empty
    /// without a password (the seal then opens on this TPM alone: Apple's hardware-only classes).
    static func authorization(passwordKey: SymmetricKey?, keychainID: Data) -> [UInt8] {
        guard let passwordKey else { return [] }
        return KeychainCrypto.derive(passwordKey, salt: keychainID, purpose: "keyhaven/v2/tpm/authorization").withUnsafeBytes { Array($0) }
    }

    /// The device key of a bound keychain: the home's device key joined with the sealed secret.
    static func deviceKey(_ deviceKey: SymmetricKey, secret: [UInt8], keychainID: Data) -> SymmetricKey {
        KeychainCrypto.derive(deviceKey, salt: keychainID + Data(secret), purpose: "keyhaven/v2/tpm/device")
    }

    /// Seals a new secret for a keychain; the seal and the device key it gives.
    static func bind(deviceKey: SymmetricKey, passwordKey: SymmetricKey?, keychainID: Data) throws(StoreError) -> (sealed: Data, deviceKey: SymmetricKey) {
        var secret = Array(KeychainCrypto.randomBytes(32))
        defer { zeroize(&secret) }
        let sealed = try sealer().seal(secret, authorization: authorization(passwordKey: passwordKey, keychainID: keychainID))
        return (sealed, Self.deviceKey(deviceKey, secret: secret, keychainID: keychainID))
    }

    /// Opens a keychain's seal: its device key.
    static func open(_ sealed: Data, deviceKey: SymmetricKey, passwordKey: SymmetricKey?, keychainID: Data) throws(StoreError) -> SymmetricKey {
        var secret = try sealer().unseal(sealed, authorization: authorization(passwordKey: passwordKey, keychainID: keychainID))
        defer { zeroize(&secret) }
        return Self.deviceKey(deviceKey, secret: secret, keychainID: keychainID)
    }
}
