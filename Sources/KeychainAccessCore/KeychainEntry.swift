import KeychainModel

/// A keychain of the sidebar: its file, its name as shown, and its lock state.
package struct KeychainEntry: Sendable, Equatable, Identifiable {
    package var id: String { path }
    package let path: String
    package let name: String
    package let isDefault: Bool
    package let hasPassword: Bool
    package let isUnlocked: Bool

    /// `name`: its label (a Secret Service collection's `Label`); nil: its file's name.
    package init(path: String, name: String? = nil, isDefault: Bool, hasPassword: Bool, isUnlocked: Bool) {
        self.path = path
        self.name = name ?? KeychainPreferences.fileName(path)
        self.isDefault = isDefault
        self.hasPassword = hasPassword
        self.isUnlocked = isUnlocked
    }

    /// The sidebar's line: the name, with the lock state (and "default") said in words for
    /// screen readers as the icon says it to the eye.
    package var accessibleDescription: String {
        "\(name), \(isUnlocked ? "unlocked" : "locked")\(isDefault ? ", default" : "")"
    }
}
