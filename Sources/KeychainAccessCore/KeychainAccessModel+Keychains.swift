import KeychainModel

/// The keychain commands, on the selected keychain; each returns the error to show, nil when done.
extension KeychainAccessModel {
    /// Creates a keychain and selects it.
    package func newKeychain(named name: String, password: [UInt8], confirmation: [UInt8]) -> String? {
        guard password == confirmation else { return "The passwords do not match." }
        var created: String?
        let error = perform { (session, _) throws(StoreError) in created = try session.createKeychain(named: name, password: password) }
        if let created { select(created) }
        return error
    }

    /// Deletes the selected keychain (its file and every item in it).
    package func deleteSelectedKeychain() -> String? {
        guard let entry = selectedKeychain else { return "No keychain is selected." }
        if entry.isDefault && entry.path.hasSuffix("/login.keychain-db") {
            return "The login keychain is where programs keep their secrets by default; it cannot be deleted here."
        }
        return perform { (session, keychain) throws(StoreError) in try session.deleteKeychain(keychain) }
    }

    package func makeSelectedDefault() -> String? {
        perform { (session, keychain) throws(StoreError) in try session.makeDefault(keychain) }
    }

    /// Changes the selected keychain's password (an empty new one removes it).
    package func changeSelectedPassword(old: [UInt8], new: [UInt8], confirmation: [UInt8]) -> String? {
        guard new == confirmation else { return "The new passwords do not match." }
        return perform { (session, keychain) throws(StoreError) in try session.changePassword(keychain, old: old, new: new) }
    }

    /// The selected keychain's lock settings, as Change Settings shows them.
    package func selectedSettings() -> LockSettings? {
        guard let session, let selected else { return nil }
        return try? session.settings(selected)
    }

    /// Sets them: lock after `minutes` of inactivity (nil: never), and when the screen locks or
    /// the system sleeps.
    package func setSelectedSettings(lockAfterMinutes minutes: Int?, lockOnSleep: Bool) -> String? {
        if let minutes, minutes < 1 || minutes > Int(UInt32.max / 60) { return "Lock after 1 to \(UInt32.max / 60) minutes." }
        let settings = LockSettings(lockOnSleep: lockOnSleep, useLockInterval: minutes != nil, lockInterval: UInt32((minutes ?? 5) * 60))
        return perform { (session, keychain) throws(StoreError) in try session.setSettings(keychain, settings) }
    }
}
