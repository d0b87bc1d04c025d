import KeychainStore

/// The one place an engine error becomes an `OSStatus`: the engine's table (docs/errors.md).
extension StoreError {
    package var osStatus: OSStatus { code.appleStatus }
}
