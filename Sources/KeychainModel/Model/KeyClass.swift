/// An accessibility class (Apple's `kSecAttrAccessible` values and AKS key classes).
///
/// Each has its own class key in the keybag. See ARCHITECTURE.md's lock model.
package enum KeyClass: String, Sendable, Hashable, CaseIterable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case always = "dk"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"
    case alwaysThisDeviceOnly = "dku"
    case whenPasscodeSetThisDeviceOnly = "akpu"

    /// Whether the class key may leave this machine (inside the file, under the password alone).
    package var isMigratable: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock, .always: return true
        default: return false
        }
    }

    /// Whether a keychain password protects the class key (every class but the `Always` ones):
    /// these keys are replaced when the password changes.
    package var isPasswordProtected: Bool { self != .always && self != .alwaysThisDeviceOnly }

    /// Whether the class needs a keychain password to exist at all.
    package var requiresPassword: Bool { self == .whenPasscodeSetThisDeviceOnly }

    /// Apple's numeric key class (`keyclass_t` in `SecKeybagSupport.h`), for the documentation of the format.
    package var appleKeyClassNumber: Int {
        switch self {
        case .whenUnlocked: 6
        case .afterFirstUnlock: 7
        case .always: 8
        case .whenUnlockedThisDeviceOnly: 9
        case .afterFirstUnlockThisDeviceOnly: 10
        case .alwaysThisDeviceOnly: 11
        case .whenPasscodeSetThisDeviceOnly: 12
        }
    }
}
