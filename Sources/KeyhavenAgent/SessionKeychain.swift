import KeychainStore
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
}
