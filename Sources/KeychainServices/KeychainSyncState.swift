import KeychainModel

/// Whether this process's keychain home takes part in sync (`keyhaven sync create` or `join`,
/// until `sync leave` or a removal), read anew on every call: what the Swift API's
/// `isSynchronizationAvailable` answers. Package-wide, not Apple's API.
package func keychainHomeSynchronizes() -> Bool {
    SyncMembership.isMember()
}
