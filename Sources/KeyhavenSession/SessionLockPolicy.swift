import KeychainStore

/// What the agent does when the session changes, iOS's "locked with the device": the screen's
/// lock and the system's sleep lock the keychains whose settings ask for it (`lockOnSleep`),
/// and the user's idle time counts toward each keychain's lock interval. The screen's unlock
/// unlocks nothing by itself: a keychain whose password is the login password is unlocked by
/// pam_keyhaven in the screen locker's PAM service, as at login (contrib/pam/README.md).
package struct SessionLockPolicy: Sendable {
    let registry: KeychainRegistry

    package init(registry: KeychainRegistry) {
        self.registry = registry
    }

    /// Applies `event`; a line for the agent's log (nil when nothing changed).
    package func apply(_ event: SessionEvent) -> String? {
        switch event {
        case .screenLocked, .sleeping:
            let locked = registry.lockForScreenOrSleep()
            let reason = event == .sleeping ? "the system is going to sleep" : "the screen locked"
            return locked.isEmpty ? nil : "\(reason): locked \(locked.joined(separator: ", "))"
        case .screenUnlocked:
            return nil
        case .idle(let duration):
            UserActivity.becameIdle(for: duration)
            let locked = registry.applyAutoLocks()
            return locked.isEmpty ? nil : "the user is idle: locked \(locked.joined(separator: ", "))"
        case .active:
            UserActivity.becameActive()
            return nil
        }
    }
}
