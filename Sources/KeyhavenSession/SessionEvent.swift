/// What the session manager says happened to the user's session.
package enum SessionEvent: Sendable, Equatable {
    /// The screen locked (logind's `Lock` signal, or `LockedHint` becoming true).
    case screenLocked
    /// The screen unlocked (`Unlock`, or `LockedHint` becoming false).
    case screenUnlocked
    /// The system is about to sleep (`PrepareForSleep(true)`).
    case sleeping
    /// The user has been idle this long (`IdleHint` true, `IdleSinceHint` its start).
    case idle(Duration)
    /// The user is active (`IdleHint` false).
    case active
}
