import Foundation

/// Apple's query keys and their fixed values as Swift strings, read from the `kSec*` constants.
///
/// The dictionaries the mirror reads, and those it builds to call itself (an identity's two
/// halves, a generated key's add), name their keys through these, so each key's code is spelt
/// once, in the constants Apple's headers declare, and a misspelt key does not compile.
/// `QueryKeyTests` fails on a code written as a literal anywhere else.
enum QueryKey {
    static let itemClass = kSecClass as String
    static let identityClass = kSecClassIdentity as String

    static let matchLimit = kSecMatchLimit as String
    static let matchLimitOne = kSecMatchLimitOne as String
    static let matchLimitAll = kSecMatchLimitAll as String
    static let matchSearchList = kSecMatchSearchList as String
    static let matchHostOrSubdomainOfHost = kSecMatchHostOrSubdomainOfHost as String
    static let matchIssuers = kSecMatchIssuers as String
    static let matchPolicy = kSecMatchPolicy as String

    static let returnData = kSecReturnData as String
    static let returnAttributes = kSecReturnAttributes as String
    static let returnRef = kSecReturnRef as String
    static let returnPersistentRef = kSecReturnPersistentRef as String

    static let valueData = kSecValueData as String
    static let valueRef = kSecValueRef as String
    static let valuePersistentRef = kSecValuePersistentRef as String

    static let useKeychain = kSecUseKeychain as String
    static let useItemList = kSecUseItemList as String
    static let useTombstones = kSecUseTombstones as String
    static let useAuthenticationUI = kSecUseAuthenticationUI as String
    static let useAuthenticationUISkip = kSecUseAuthenticationUISkip as String
    static let useAuthenticationUIFail = kSecUseAuthenticationUIFail as String
    static let useAuthenticationUIAllow = kSecUseAuthenticationUIAllow as String
    /// The `kSecUse*` keys Apple accepts that have no effect here.
    static let ignoredUse: Set<String> = Set([
        kSecUseCredentialReference, kSecUseOperationPrompt, kSecUseNoAuthenticationUI, kSecUseAuthenticationContext,
        kSecUseCallerName, kSecUseTokenRawItems, kSecUseSystemKeychainAlways, kSecUseSystemKeychain,
        kSecUseSyncBubbleKeychain, kSecUseCertificatesWithMatchIssuers, kSecUseUserIndependentKeychain,
    ].map { $0 as String })

    /// `kSecAttrAccess`: a file-based keychain's access object, which is not a stored attribute.
    static let access = kSecAttrAccess as String
    /// `kSecAttrUUID`, accepted and ignored as Apple's data-protection keychain does.
    static let uuid = kSecAttrUUID as String
    /// `kSecAttrSynchronizableAny`, the value of `kSecAttrSynchronizable` that matches both.
    static let synchronizableAny = kSecAttrSynchronizableAny as String
    /// Internet passwords' private extra data fields, which need a private entitlement.
    static let internetExtraData: Set<String> = Set([
        kSecDataInetExtraNotes, kSecDataInetExtraHistory, kSecDataInetExtraClientDefined0,
        kSecDataInetExtraClientDefined1, kSecDataInetExtraClientDefined2, kSecDataInetExtraClientDefined3,
    ].map { $0 as String })
}
