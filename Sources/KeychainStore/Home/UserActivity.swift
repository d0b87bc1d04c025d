import Synchronization

/// Whether the user of this session is idle, and since when, as the session manager says
/// (logind's `IdleHint` and `IdleSinceHint`): a keychain's lock interval counts from the later of
/// its last use and, while the user is idle, the moment the user went idle. Set by the agent's
/// session watch; nil (the user is present, or nothing says otherwise) in every other process.
package enum UserActivity {
    private static let idle = Mutex<ContinuousClock.Instant?>(nil)

    /// Since when the user is idle; nil while the user is active.
    package static var idleSince: ContinuousClock.Instant? { idle.withLock { $0 } }

    /// The user has been idle for `duration` (from the session manager's timestamp).
    package static func becameIdle(for duration: Duration) {
        idle.withLock { $0 = ContinuousClock.now - max(.zero, duration) }
    }

    /// The user is active again.
    package static func becameActive() {
        idle.withLock { $0 = nil }
    }
}
