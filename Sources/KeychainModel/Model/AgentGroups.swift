/// The access groups that are the agent's own: no program is granted them, the Secret Service
/// does not show their items, and Keychain Access lists them apart from the user's.
package enum AgentGroups {
    /// The access groups granted to applications (`AccessGrants`).
    package static let grants = "keyhaven.access"
    /// The sync engine's device state and keys.
    package static let sync = "com.keyhaven.sync"
    /// The Secret portal's applications' secrets.
    package static let portal = "keyhaven.portal"

    package static let all: Set<String> = [grants, sync, portal]
}
