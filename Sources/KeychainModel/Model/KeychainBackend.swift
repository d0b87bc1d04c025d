import FoundationEssentials

/// A keychain the mirror can call: the embedded engine (`KeychainDatabase`), or the agent
/// holding it for this user (`AgentKeychain`). Every SecItem and SecKeychain call goes through
/// one, so both behave the same (the conformance suite runs against each).
package protocol KeychainBackend: Sendable {
    /// The keychain file's path.
    var path: String { get }
    func add(_ item: NewItem, caller: Caller) throws(StoreError) -> StoredItem
    /// The items matching `query`. With `withAttributes` false the caller needs no more of a
    /// password item than its secret (a look-up that returns its data alone), and a backend may
    /// leave out such items' attributes and access objects: the agent does, so they do not cross
    /// the socket; the engine in process returns them, as they cost it nothing more.
    func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool, withAttributes: Bool) throws(StoreError) -> [StoredItem]
    func update(_ query: ItemQuery, with changes: ItemChanges, caller: Caller) throws(StoreError) -> Int
    func delete(_ query: ItemQuery, caller: Caller, makeTombstones: Bool) throws(StoreError) -> Int
    func currentStatus() throws(StoreError) -> KeychainStatus
    func unlock(password: [UInt8]) throws(StoreError)
    func lockKeychain() throws(StoreError)
    func changePassword(old: [UInt8], new: [UInt8]) throws(StoreError)
    func currentLockSettings() throws(StoreError) -> LockSettings
    func setLockSettings(_ settings: LockSettings) throws(StoreError)
    func backup(to destination: String, password: [UInt8]) throws(StoreError)
}

extension KeychainBackend {
    /// The items matching `query`, whole.
    package func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool) throws(StoreError) -> [StoredItem] {
        try find(query, caller: caller, withSecrets: withSecrets, withAttributes: true)
    }
}

