import FoundationEssentials

/// A keychain the mirror can call: the embedded engine (`KeychainDatabase`), or the agent
/// holding it for this user (`AgentKeychain`). Every SecItem and SecKeychain call goes through
/// one, so both behave the same (the conformance suite runs against each).
package protocol KeychainBackend: Sendable {
    /// The keychain file's path.
    var path: String { get }
    func add(_ item: NewItem, caller: Caller) throws(StoreError) -> StoredItem
    func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool) throws(StoreError) -> [StoredItem]
    func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller) throws(StoreError) -> Int
    func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool) throws(StoreError) -> Int
    func currentStatus() throws(StoreError) -> KeychainStatus
    func unlock(password: [UInt8]) throws(StoreError)
    func lockKeychain() throws(StoreError)
    func changePassword(old: [UInt8], new: [UInt8]) throws(StoreError)
    func currentLockSettings() throws(StoreError) -> LockSettings
    func setLockSettings(_ settings: LockSettings) throws(StoreError)
    func backup(to destination: String) throws(StoreError)
}

