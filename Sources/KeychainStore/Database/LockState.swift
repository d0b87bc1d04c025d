import Crypto
import FoundationEssentials

/// Whether a keychain's password-protected classes open in this process (the lock model,
/// docs/architecture.md). Each case carries what exists in it alone: the password key only while
/// unlocked, a password's parameters only where there is a password, so a state the lock model
/// has no name for (unlocked without a key, foreign without a password) cannot be built.
enum LockState: Sendable {
    /// No password: every class opens with the device key; it cannot be locked (a device without
    /// a passcode).
    case noPassword
    /// A password, locked: the classes that need it (`ak`, `aku`, `akpu`) have no key here.
    case locked(PasswordKDF)
    /// A password, unlocked with it: its key stays while unlocked (a backup and a migration need it).
    case unlocked(PasswordKDF, passwordKey: SymmetricKey)
    /// Made on another machine (a backup): this machine's device key opens nothing in it; its
    /// password adopts it.
    case foreign(PasswordKDF)

    /// How a keychain opens: without a password unlocked, with one locked (the lock model's "reboot").
    init(kdf: PasswordKDF?, foreign: Bool) {
        switch kdf {
        case nil: self = .noPassword
        case let kdf?: self = foreign ? .foreign(kdf) : .locked(kdf)
        }
    }

    /// The password's parameters; nil without a password.
    var kdf: PasswordKDF? {
        switch self {
        case .noPassword: nil
        case .locked(let kdf), .unlocked(let kdf, _), .foreign(let kdf): kdf
        }
    }

    var isUnlocked: Bool {
        switch self {
        case .noPassword, .unlocked: true
        case .locked, .foreign: false
        }
    }

    var isForeign: Bool {
        if case .foreign = self { true } else { false }
    }

    /// The password's key, while unlocked with it.
    var passwordKey: SymmetricKey? {
        if case .unlocked(_, let key) = self { key } else { nil }
    }

    /// Unlocked with `passwordKey` under `kdf`, or without a password when `kdf` is nil.
    static func opened(kdf: PasswordKDF?, passwordKey: SymmetricKey?) -> LockState {
        guard let kdf, let passwordKey else { return .noPassword }
        return .unlocked(kdf, passwordKey: passwordKey)
    }
}

/// Whether a keychain is bound to the TPM (docs/tpm.md) and, if so, whether the TPM's secret is
/// in the device key now: a bound keychain with a password holds it only while unlocked.
enum TPMBinding: Sendable {
    case unbound
    /// Bound, its secret not unsealed here: the device rows open with nothing in memory.
    case sealed(Data)
    /// Bound and unsealed: `deviceKey` is the home's device key joined with the TPM's secret.
    case unsealed(Data, deviceKey: SymmetricKey)

    /// The seal, for a bound keychain.
    var seal: Data? {
        switch self {
        case .unbound: nil
        case .sealed(let seal), .unsealed(let seal, _): seal
        }
    }

    /// The device key with the TPM's secret in it, once unsealed.
    var deviceKey: SymmetricKey? {
        if case .unsealed(_, let key) = self { key } else { nil }
    }
}
