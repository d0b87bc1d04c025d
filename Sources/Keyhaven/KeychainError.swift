import Foundation
import KeychainServices

/// An error from the keychain: the `OSStatus` behind it, what kind of failure it is, Apple's
/// message, and which operation failed on which query keys.
///
/// It never holds values or secrets: only the names of the keys in the query, so that it can be
/// logged. Match it by code:
///
/// ```swift
/// do {
///     try keychain.set("s3cret", forKey: "token")
/// } catch KeychainError.interactionNotAllowed {
///     // locked: try again after unlocking
/// }
/// ```
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; switch with a `default` case.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable {
            case itemNotFound, duplicateItem, interactionNotAllowed, authenticationFailed, missingEntitlement
            case invalidParameter, notAvailable, decode, unexpectedData, other
        }
        fileprivate let base: Base
        public var description: String { base.rawValue }

        fileprivate init(base: Base) { self.base = base }

        /// No item matched (`errSecItemNotFound`).
        public static let itemNotFound = Code(base: .itemNotFound)
        /// An item with the same key exists (`errSecDuplicateItem`).
        public static let duplicateItem = Code(base: .duplicateItem)
        /// The keychain is locked for the item's accessibility (`errSecInteractionNotAllowed`).
        public static let interactionNotAllowed = Code(base: .interactionNotAllowed)
        /// A password was wrong (`errSecAuthFailed`).
        public static let authenticationFailed = Code(base: .authenticationFailed)
        /// The access group may not be used (`errSecMissingEntitlement`).
        public static let missingEntitlement = Code(base: .missingEntitlement)
        /// A parameter was not valid (`errSecParam`, or a query this API refused to build).
        public static let invalidParameter = Code(base: .invalidParameter)
        /// No keychain is available (`errSecNotAvailable`).
        public static let notAvailable = Code(base: .notAvailable)
        /// Stored data could not be decrypted or decoded, or is not of the type asked for.
        public static let decode = Code(base: .decode)
        /// The keychain returned something of a shape this API did not expect.
        public static let unexpectedData = Code(base: .unexpectedData)
        /// Any other status; see ``KeychainError/status``.
        public static let other = Code(base: .other)

        init(status: OSStatus) {
            switch status {
            case errSecItemNotFound: self = .itemNotFound
            case errSecDuplicateItem: self = .duplicateItem
            case errSecInteractionNotAllowed: self = .interactionNotAllowed
            case errSecAuthFailed: self = .authenticationFailed
            case errSecMissingEntitlement: self = .missingEntitlement
            case errSecParam: self = .invalidParameter
            case errSecNotAvailable: self = .notAvailable
            case errSecDecode: self = .decode
            default: self = .other
            }
        }
    }

    /// The status the Security call returned.
    public let status: OSStatus
    public let code: Code
    /// Apple's message for the status, or what this API found wrong.
    public let message: String
    /// The Security function that failed (`SecItemCopyMatching`, ...).
    public let operation: String
    /// The names of the keys in the failed query (`acct`, `svce`, `r_Data`, ...), never their values.
    public let queryKeys: [String]

    init(status: OSStatus, operation: String, queryKeys: [String], message: String? = nil, code: Code? = nil) {
        self.status = status
        self.code = code ?? Code(status: status)
        self.message = message ?? SecCopyErrorMessageString(status, nil).map { String($0) } ?? "OSStatus \(status)"
        self.operation = operation
        self.queryKeys = queryKeys.sorted()
    }

    public var description: String {
        "KeychainError.\(code) (\(status)): \(message) [\(operation); keys: \(queryKeys.joined(separator: ", "))]"
    }

    // Matching `catch KeychainError.itemNotFound` and `case KeychainError.duplicateItem`.
    public static let itemNotFound = Code.itemNotFound
    public static let duplicateItem = Code.duplicateItem
    public static let interactionNotAllowed = Code.interactionNotAllowed
    public static let authenticationFailed = Code.authenticationFailed
    public static let missingEntitlement = Code.missingEntitlement
    public static let invalidParameter = Code.invalidParameter
    public static let notAvailable = Code.notAvailable
    public static let decode = Code.decode
    public static let unexpectedData = Code.unexpectedData
}

/// Lets `catch KeychainError.itemNotFound` match a thrown ``KeychainError`` by its code.
public func ~= (pattern: KeychainError.Code, error: any Error) -> Bool {
    (error as? KeychainError)?.code == pattern
}

/// The same match when the error is already typed (`throws(KeychainError)`).
public func ~= (pattern: KeychainError.Code, error: KeychainError) -> Bool {
    error.code == pattern
}
