import KeychainServices

/// When an item can be read (Apple's `kSecAttrAccessible` classes).
public enum Accessibility: String, Sendable, CaseIterable {
    /// While the keychain is unlocked (the default). Moves with the keychain to another machine.
    case whenUnlocked = "ak"
    /// From the first unlock after the process (or agent) started. Moves with the keychain.
    case afterFirstUnlock = "ck"
    /// While unlocked, only in a keychain with a password, never leaves this machine.
    case whenPasscodeSetThisDeviceOnly = "akpu"
    /// While unlocked; never leaves this machine.
    case whenUnlockedThisDeviceOnly = "aku"
    /// From the first unlock; never leaves this machine.
    case afterFirstUnlockThisDeviceOnly = "cku"

    /// The `kSecAttrAccessible` value.
    var attributeValue: String { rawValue }
}

/// Whether an operation applies to items that sync, items that do not, or both (SAMKeychain's
/// `SAMKeychainQuerySynchronizationMode`).
public enum SynchronizationMode: Sendable, Hashable {
    /// Queries see both kinds; adds make a local item.
    case any
    /// Local items only.
    case no
    /// Synchronizable items only.
    case yes

    /// The `kSecAttrSynchronizable` value for a query or an add.
    func attributeValue(forAdd: Bool) -> Any? {
        switch self {
        case .any: return forAdd ? nil : kSecAttrSynchronizableAny
        case .no: return false
        case .yes: return true
        }
    }
}
