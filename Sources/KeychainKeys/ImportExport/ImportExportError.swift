import KeychainModel

/// Why items could not be imported or exported, with the `OSStatus` macOS's `SecItemImport` and
/// `SecItemExport` report for it.
///
/// The message says what was wrong with the input; it never holds key material, a passphrase or
/// a certificate's bytes (swift-certificates' error shape: a code struct over a private enum).
package struct ImportExportError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case unknownFormat, unsupportedFormat, passphraseRequired, wrongPassphrase, pkcs12WrongPassphrase
            case malformed, invalidParameter, notExtractable
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The data is in no format that can be read (errSecUnknownFormat).
        package static let unknownFormat = Code(.unknownFormat)
        /// A format Keyhaven does not read or write, or one that does not fit the items (errSecUnsupportedFormat).
        package static let unsupportedFormat = Code(.unsupportedFormat)
        /// The format needs a passphrase and none was given (errSecPassphraseRequired).
        package static let passphraseRequired = Code(.passphraseRequired)
        /// The passphrase does not open an encrypted key (errSecAuthFailed).
        package static let wrongPassphrase = Code(.wrongPassphrase)
        /// The passphrase does not verify a PKCS#12 file's MAC (errSecPkcs12VerifyFailure).
        package static let pkcs12WrongPassphrase = Code(.pkcs12WrongPassphrase)
        /// The data is in a known format but damaged (errSecDecode).
        package static let malformed = Code(.malformed)
        /// The request itself is not valid (errSecParam).
        package static let invalidParameter = Code(.invalidParameter)
        /// A private key that may not leave the keychain (errSecDataNotAvailable).
        package static let notExtractable = Code(.notExtractable)

        package var description: String { "\(backing)" }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The status macOS reports for this failure.
    package var osStatus: Int32 { storeError.code.appleStatus }

    /// The same failure as the engine's error (for the command, which reports engine errors).
    package var storeError: StoreError {
        let mapped: StoreError.Code
        switch code {
        case .unknownFormat: mapped = .unknownFormat
        case .unsupportedFormat: mapped = .unsupportedFormat
        case .passphraseRequired: mapped = .passphraseRequired
        case .wrongPassphrase: mapped = .authFailed
        case .pkcs12WrongPassphrase: mapped = .pkcs12VerifyFailure
        case .malformed: mapped = .decode
        case .notExtractable: mapped = .dataNotAvailable
        default: mapped = .invalidParameter
        }
        return StoreError(mapped, message)
    }

    package var description: String { message }
}
