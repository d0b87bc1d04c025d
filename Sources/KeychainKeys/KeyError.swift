/// A failure of a key operation, with the `OSStatus` Apple's SecKey functions report for it.
///
/// The message says what was wrong with the request; it never holds key material, plaintext or
/// signatures (swift-certificates' error shape: a code struct over a private enum).
package struct KeyError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case invalidParameter, unsupportedAlgorithm, verificationFailed, decryptionFailed, notExtractable
            case keychainStatus(Int32)
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The input or the parameters are not valid (errSecParam).
        package static let invalidParameter = Code(.invalidParameter)
        /// The key cannot perform the algorithm (errSecUnimplemented, as Apple reports it).
        package static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// A signature does not verify (errSecVerifyFailed).
        package static let verificationFailed = Code(.verificationFailed)
        /// A ciphertext does not open (errSecParam, as Apple reports it).
        package static let decryptionFailed = Code(.decryptionFailed)
        /// The key's material may not leave it (errSecItemNotFound is not it: Apple says errSecParam).
        package static let notExtractable = Code(.notExtractable)

        /// A keychain call failed with this status (a permanent key's add, a stored key's look-up).
        package static func keychainStatus(_ status: Int32) -> Code { Code(.keychainStatus(status)) }

        package var description: String { "\(backing)" }
        var keychainStatus: Int32? {
            if case .keychainStatus(let status) = backing { return status }
            return nil
        }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Apple's status for this failure.
    package var osStatus: Int32 {
        if let status = code.keychainStatus { return status }
        switch code {
        case .unsupportedAlgorithm: return -4        // errSecUnimplemented
        case .verificationFailed: return -67808      // errSecVerifyFailed
        default: return -50                          // errSecParam
        }
    }

    package var description: String { message }

    package static func param(_ message: String) -> KeyError { KeyError(.invalidParameter, message) }
}
