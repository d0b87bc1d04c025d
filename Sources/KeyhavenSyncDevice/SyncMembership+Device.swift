import KeychainModel

/// The device side writes the home's sync marker, which the library reads.
extension SyncMembership {
    package static func join(_ home: KeychainHome, account: String) throws(StoreError) {
        try FileSecurity.createMissingPrivateDirectories(home.path + "/sync")
        try FileSecurity.replace(markerPath(home), bytes: Array((account + "\n").utf8))
    }

    package static func leave(_ home: KeychainHome) {
        try? FileSecurity.remove(markerPath(home))
    }
}
