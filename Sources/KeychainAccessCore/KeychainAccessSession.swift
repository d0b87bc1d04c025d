import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgentClient

/// Keychain Access's connection to the agent, as an administrator program (`keyhaven`'s role):
/// it lists every keychain and every item's attributes, locks and unlocks. Secrets are read only
/// with the keychain's password, entered each time. Errors are the agent's, with their messages.
package struct KeychainAccessSession: Sendable {
    let session: AgentSession

    /// Connects to the agent of this keychain home, starting it if none runs.
    package static func open() throws(StoreError) -> KeychainAccessSession {
        KeychainAccessSession(session: try AgentSession.connect())
    }

    /// The keychains of the search list, the default first, with their lock state.
    package func keychains() throws(StoreError) -> [KeychainEntry] {
        let preferences = try KeychainPreferences.load(session.home)
        let defaultPath = preferences.defaultPath(session.home)
        var paths = preferences.existingSearchPaths(session.home)
        if let index = paths.firstIndex(of: defaultPath) { paths.remove(at: index) }
        paths.insert(defaultPath, at: 0)
        return try paths.map { (path) throws(StoreError) in
            let status = try session.send(.status(keychain: path)).status()
            return KeychainEntry(path: path, name: preferences.label(of: path), isDefault: path == defaultPath,
                                 hasPassword: status.hasPassword, isUnlocked: status.isUnlocked)
        }
    }

    /// Every item of `keychain` (attributes only), identities marked, but the agent's own
    /// (``AgentGroups``); empty while it is locked.
    package func rows(in keychain: String) throws(StoreError) -> [ItemRow] {
        var rows: [ItemRow] = []
        for itemClass in ItemClass.allCases {
            var query = ItemQuery(itemClass: itemClass)
            query.limit = nil
            query.matchAnySynchronizable = true
            do {
                let items = try session.send(.find(keychains: [keychain], query: query, caller: session.caller, withSecrets: false)).items()
                rows += items.filter { item in
                    guard case .string(let group)? = item.attributes[.accessGroup] else { return true }
                    return !AgentGroups.all.contains(group)
                }.map { ItemRow($0, keychainPath: keychain) }
            } catch where error.code == .itemNotFound || error.code == .interactionNotAllowed {
                continue
            }
        }
        return ItemBrowser.pairIdentities(rows)
    }

    package func lock(_ keychain: String) throws(StoreError) {
        _ = try session.send(.lock(keychain: keychain))
    }

    /// Unlocks `keychain` with `password` (`.authFailed` when it is not its password).
    package func unlock(_ keychain: String, password: [UInt8]) throws(StoreError) {
        _ = try session.send(.unlock(keychain: keychain, password: Data(password)))
    }
}
