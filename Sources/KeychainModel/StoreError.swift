/// An error from the keychain engine.
///
/// A struct over a private enum, so new codes can be added without breaking anyone who switches
/// over them. The message never contains item data or secrets: only what kind of failure it was
/// and, where useful, which attribute or operation was involved.
package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable, CaseIterable {
            case invalidParameter, noSuchAttribute, noSuchClass, duplicateItem, itemNotFound
            case missingEntitlement, interactionNotAllowed, notAvailable, decode
            case diskFull, io, readOnly, invalidKeychain, wrongVersion, dataTooLarge
            case internalError, authFailed, unimplemented, noSuchKeychain, duplicateKeychain
            case unknownFormat, unsupportedFormat, passphraseRequired, pkcs12VerifyFailure, dataNotAvailable
            case multiplePrivateKeys, userCanceled, lockedOut
        }
        fileprivate let base: Base
        package var description: String { base.rawValue }

        fileprivate init(base: Base) { self.base = base }

        /// Every code (the agent protocol numbers each; its test holds the two lists together).
        package static let all: [Code] = Base.allCases.map(Code.init(base:))

        /// A value or a combination of values the caller passed is not valid.
        package static let invalidParameter = Code(base: .invalidParameter)
        /// An attribute name that the item class does not have.
        package static let noSuchAttribute = Code(base: .noSuchAttribute)
        /// An item class that does not exist.
        package static let noSuchClass = Code(base: .noSuchClass)
        /// An item with the same primary key already exists.
        package static let duplicateItem = Code(base: .duplicateItem)
        /// No item matched.
        package static let itemNotFound = Code(base: .itemNotFound)
        /// The caller may not use the access group it named, or has none.
        package static let missingEntitlement = Code(base: .missingEntitlement)
        /// The key the operation needs is not in memory (the keychain is locked).
        package static let interactionNotAllowed = Code(base: .interactionNotAllowed)
        /// The keychain cannot be opened or used now.
        package static let notAvailable = Code(base: .notAvailable)
        /// Stored data failed authentication or could not be parsed: tampered or corrupt.
        package static let decode = Code(base: .decode)
        /// The disk is full.
        package static let diskFull = Code(base: .diskFull)
        /// An I/O error from the file system.
        package static let io = Code(base: .io)
        /// The keychain file cannot be written.
        package static let readOnly = Code(base: .readOnly)
        /// The file is not a keychain (or its header is damaged).
        package static let invalidKeychain = Code(base: .invalidKeychain)
        /// The keychain was written by a newer format version than this build reads.
        package static let wrongVersion = Code(base: .wrongVersion)
        /// A value is larger than the keychain accepts.
        package static let dataTooLarge = Code(base: .dataTooLarge)
        /// An internal failure (a bug or an unexpected state of SQLite).
        package static let internalError = Code(base: .internalError)
        /// A password or other authentication was wrong.
        package static let authFailed = Code(base: .authFailed)
        /// No keychain at the path.
        package static let noSuchKeychain = Code(base: .noSuchKeychain)
        /// A keychain already exists at the path.
        package static let duplicateKeychain = Code(base: .duplicateKeychain)
        /// The operation is not implemented.
        package static let unimplemented = Code(base: .unimplemented)
        /// Imported data is in no format that can be read.
        package static let unknownFormat = Code(base: .unknownFormat)
        /// An import or export format that is not supported, or does not fit the items.
        package static let unsupportedFormat = Code(base: .unsupportedFormat)
        /// An import or export needs a passphrase and none was given.
        package static let passphraseRequired = Code(base: .passphraseRequired)
        /// A PKCS#12 file's MAC does not verify with the passphrase.
        package static let pkcs12VerifyFailure = Code(base: .pkcs12VerifyFailure)
        /// The item's contents cannot be given out (a key that is not extractable).
        package static let dataNotAvailable = Code(base: .dataNotAvailable)
        /// An import that may hold one private key holds several.
        package static let multiplePrivateKeys = Code(base: .multiplePrivateKeys)
        /// The user cancelled a prompt, or closed it.
        package static let userCanceled = Code(base: .userCanceled)
        /// The hardware that checks the password (the TPM) refuses every try, the right one too,
        /// until its dictionary-attack lockout passes (errSecAuthFailed; the message says how long).
        package static let lockedOut = Code(base: .lockedOut)
    }

    /// Which of a code's failures this is, where a caller acts on the difference: a code is
    /// Apple's status, and one status covers several failures (a locked keychain and a prompt that
    /// cannot be shown are both `errSecInteractionNotAllowed`). The agent protocol carries it
    /// with the code and the message.
    package struct Reason: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable, CaseIterable {
            case keychainLocked, agentRunning
        }
        fileprivate let base: Base
        package var description: String { base.rawValue }

        /// Every reason.
        package static let all: [Reason] = Base.allCases.map { Reason(base: $0) }

        /// The keychain, or the class key an item needs, is locked (with `.interactionNotAllowed`).
        package static let keychainLocked = Reason(base: .keychainLocked)
        /// Another keyhavend already serves the agent's socket (with `.notAvailable`).
        package static let agentRunning = Reason(base: .agentRunning)
    }

    /// What went wrong, as a code callers can match on.
    package let code: Code
    /// Which failure of its code this is, where callers tell them apart; nil for the others.
    package let reason: Reason?
    /// A human-readable explanation. Never contains secrets or item data.
    package let message: String
    /// Where in the engine the error was raised, for bug reports.
    package let location: String

    package init(_ code: Code, _ message: String, reason: Reason? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.message = message
        self.location = "\(file):\(line)"
    }

    package var description: String { "StoreError.\(code): \(message)" }

    package static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code && lhs.message == rhs.message }
    package func hash(into hasher: inout Hasher) { hasher.combine(code); hasher.combine(message) }
}

extension StoreError.Code {
    /// Apple's `OSStatus` for this code (docs/errors.md has the table).
    package var appleStatus: Int32 {
        switch base {
        case .invalidParameter: return -50         // errSecParam
        case .noSuchAttribute: return -25303       // errSecNoSuchAttr
        case .noSuchClass: return -25306           // errSecNoSuchClass
        case .duplicateItem: return -25299         // errSecDuplicateItem
        case .itemNotFound: return -25300          // errSecItemNotFound
        case .missingEntitlement: return -34018    // errSecMissingEntitlement
        case .interactionNotAllowed: return -25308 // errSecInteractionNotAllowed
        case .notAvailable: return -25291          // errSecNotAvailable
        case .decode: return -26275                // errSecDecode
        case .diskFull: return -34                 // errSecDiskFull
        case .io: return -36                       // errSecIO
        case .readOnly: return -25292              // errSecReadOnly
        case .invalidKeychain: return -25295       // errSecInvalidKeychain
        case .wrongVersion: return -25310          // errSecWrongSecVersion
        case .dataTooLarge: return -25302          // errSecDataTooLarge
        case .authFailed: return -25293            // errSecAuthFailed
        case .unimplemented: return -4             // errSecUnimplemented
        case .noSuchKeychain: return -25294        // errSecNoSuchKeychain
        case .duplicateKeychain: return -25296     // errSecDuplicateKeychain
        case .internalError: return -26276         // errSecInternal
        case .unknownFormat: return -25257         // errSecUnknownFormat
        case .unsupportedFormat: return -25256     // errSecUnsupportedFormat
        case .passphraseRequired: return -25260    // errSecPassphraseRequired
        case .pkcs12VerifyFailure: return -25264   // errSecPkcs12VerifyFailure
        case .dataNotAvailable: return -25316      // errSecDataNotAvailable
        case .multiplePrivateKeys: return -25259   // errSecMultiplePrivKeys
        case .userCanceled: return -128            // errSecUserCanceled
        case .lockedOut: return -25293             // errSecAuthFailed
        }
    }
}
