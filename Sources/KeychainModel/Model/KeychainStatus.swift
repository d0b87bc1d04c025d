/// What `SecKeychainGetStatus` reports about a keychain.
package struct KeychainStatus: Sendable, Equatable {
    package let hasPassword: Bool
    package let isUnlocked: Bool
    /// Opened on a machine whose device key does not open it (a copied file), before its
    /// password has.
    package let isForeign: Bool
    /// Bound to this machine's TPM (docs/tpm.md): its device key is sealed there.
    package let isBound: Bool

    package init(hasPassword: Bool, isUnlocked: Bool, isForeign: Bool, isBound: Bool = false) {
        self.hasPassword = hasPassword
        self.isUnlocked = isUnlocked
        self.isForeign = isForeign
        self.isBound = isBound
    }
}
