import KeychainStore

/// The one place an engine error becomes an `OSStatus` (table in docs/errors.md).
extension StoreError {
    package var osStatus: OSStatus {
        switch code {
        case .invalidParameter: return errSecParam
        case .noSuchAttribute: return errSecNoSuchAttr
        case .noSuchClass: return errSecNoSuchClass
        case .duplicateItem: return errSecDuplicateItem
        case .itemNotFound: return errSecItemNotFound
        case .missingEntitlement: return errSecMissingEntitlement
        case .interactionNotAllowed: return errSecInteractionNotAllowed
        case .notAvailable: return errSecNotAvailable
        case .decode: return errSecDecode
        case .diskFull: return errSecDiskFull
        case .io: return errSecIO
        case .readOnly: return errSecReadOnly
        case .invalidKeychain: return errSecInvalidKeychain
        case .wrongVersion: return errSecWrongSecVersion
        case .dataTooLarge: return errSecDataTooLarge
        case .authFailed: return errSecAuthFailed
        case .unimplemented: return errSecUnimplemented
        case .noSuchKeychain: return errSecNoSuchKeychain
        case .duplicateKeychain: return errSecDuplicateKeychain
        default: return errSecInternal
        }
    }
}
