import KeychainStore
import KeyhavenAgentClient
import Synchronization

/// The keychain behind the Secret Service's `session` collection: in this agent's memory alone,
/// made at its first use, without a password (so never locked), gone when the agent exits
/// (docs/secret-service.md, "The session collection"). Its items are sealed as a file's are, under
/// class keys in locked memory; access groups and access objects apply to them as to any item.
package final class SessionKeychain: Sendable {
    private let database = Mutex<KeychainDatabase?>(nil)

    package init() {}

    func open(named path: String) throws(StoreError) -> KeychainDatabase {
        try database.withLock { (database: inout KeychainDatabase?) throws(StoreError) -> KeychainDatabase in
            if let database { return database }
            let made = try KeychainDatabase(inMemoryNamed: path)
            database = made
            return made
        }
    }

    /// Refuses what only a keychain file has: a password, lock settings, a backup, a TPM binding,
    /// being made or deleted.
    static func refuse(_ request: AgentRequest, sessionPath: String) throws(StoreError) {
        let keychain: String?
        switch request {
        case .create(let path, _), .deleteKeychain(let path), .changePassword(let path, _, _), .setSettings(let path, _),
             .backup(let path, _, _), .setBound(let path, _, _):
            keychain = path
        default:
            keychain = nil
        }
        guard keychain == sessionPath else { return }
        throw StoreError(.unimplemented, "the session keychain lives in the agent's memory: it has no file, password or settings")
    }
}
