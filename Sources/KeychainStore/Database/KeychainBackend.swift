import FoundationEssentials

extension KeychainDatabase: KeychainBackend {
    package func currentStatus() -> Status { status() }
    package func lockKeychain() { lock() }
    package func currentLockSettings() -> LockSettings { lockSettings() }
}
