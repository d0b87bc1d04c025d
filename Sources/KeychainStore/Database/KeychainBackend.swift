import FoundationEssentials

extension KeychainDatabase: KeychainBackend {
    package func currentStatus() -> Status { status() }
    package func find(_ query: ItemQuery, caller: Caller, withSecrets: Bool, withAttributes: Bool) throws(StoreError) -> [StoredItem] {
        try find(query, caller: caller, withSecrets: withSecrets)
    }
    package func lockKeychain() { lock() }
    package func currentLockSettings() -> LockSettings { lockSettings() }
}
