import Foundation
import KeychainStore
import Synchronization

/// `kSecAttrAccess`: a ``SecAccess`` for `SecItemAdd`, the programs the new item trusts (macOS's
/// file keychains). Without it an item trusts the program that adds it.
nonisolated(unsafe) public let kSecAttrAccess: CFString = NSString(string: "acls")

/// A program an access object trusts: its path and the SHA-256 of its file (docs/access.md).
public final class SecTrustedApplication: Hashable, Sendable, CustomStringConvertible {
    let application: TrustedApplication

    init(_ application: TrustedApplication) { self.application = application }

    public static func == (lhs: SecTrustedApplication, rhs: SecTrustedApplication) -> Bool { lhs.application == rhs.application }
    public func hash(into hasher: inout Hasher) { hasher.combine(application) }
    public var description: String { "<SecTrustedApplication \(application.path)>" }
}

/// macOS's access object for a keychain item: which programs may use it without a prompt.
///
/// The agent enforces it for every program that goes through it, prompting through pinentry for
/// the others; the embedded engine records it (docs/access.md). Its ACL list has Apple's three
/// standard entries: changing the access (the trusted programs), encrypting (any program), and
/// decrypting (the trusted programs); the first and the last are the same list here.
public final class SecAccess: Hashable, Sendable {
    let state: Mutex<ItemAccess>

    init(_ access: ItemAccess) { state = Mutex(access) }

    var access: ItemAccess { state.withLock { $0 } }

    public static func == (lhs: SecAccess, rhs: SecAccess) -> Bool { lhs === rhs || lhs.access == rhs.access }
    public func hash(into hasher: inout Hasher) { hasher.combine(access) }
}

/// One entry of an access object's ACL list.
public final class SecACL: Hashable, Sendable {
    /// What the entry authorizes (Apple's `CSSM_ACL_AUTHORIZATION_*` names).
    enum Authorization: String, Sendable { case changeACL = "ACLAuthorizationChangeACL", encrypt = "ACLAuthorizationEncrypt",
                                                 decrypt = "ACLAuthorizationDecrypt" }
    let owner: SecAccess
    let authorization: Authorization

    init(owner: SecAccess, authorization: Authorization) {
        self.owner = owner
        self.authorization = authorization
    }

    public static func == (lhs: SecACL, rhs: SecACL) -> Bool { lhs.owner === rhs.owner && lhs.authorization == rhs.authorization }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(owner))
        hasher.combine(authorization)
    }
}

public typealias SecTrustedApplicationRef = SecTrustedApplication
public typealias SecACLRef = SecACL

/// When a prompt also asks for the keychain's password (`SecACLCopyContents`'s selector).
public struct SecKeychainPromptSelector: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let requirePassphase = SecKeychainPromptSelector(rawValue: 0x0001)
    public static let unsigned = SecKeychainPromptSelector(rawValue: 0x0010)
    public static let unsignedAct = SecKeychainPromptSelector(rawValue: 0x0020)
    public static let invalid = SecKeychainPromptSelector(rawValue: 0x0040)
    public static let invalidAct = SecKeychainPromptSelector(rawValue: 0x0080)
}

/// A trusted application for the program at `path` (its file is read and hashed now); nil: the
/// calling program. errSecParam for a path that names no readable file.
@discardableResult
public func SecTrustedApplicationCreateFromPath(_ path: UnsafePointer<CChar>?,
                                                _ app: UnsafeMutablePointer<SecTrustedApplication?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let identity = try engine { () throws(StoreError) -> ApplicationIdentity in
            guard let path else { return ApplicationIdentityReader.current() }
            return try ApplicationIdentityReader.application(atPath: String(cString: path))
        }
        guard !identity.digest.isEmpty else { throw .param("this program's file cannot be read") }
        app.pointee = SecTrustedApplication(TrustedApplication(identity))
    }
}

/// The trusted application's data: its program's path (UTF-8).
@discardableResult
public func SecTrustedApplicationCopyData(_ appRef: SecTrustedApplication, _ data: UnsafeMutablePointer<CFData?>) -> OSStatus {
    data.pointee = Data(appRef.application.path.utf8) as CFData
    return errSecSuccess
}

/// An access object named `descriptor` (the name prompts show) that trusts `trustedlist`: nil
/// for the calling program alone, an empty array for no program.
@discardableResult
public func SecAccessCreate(_ descriptor: CFString, _ trustedlist: CFArray?, _ accessRef: UnsafeMutablePointer<SecAccess?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let applications = try trustedApplications(trustedlist) ?? [TrustedApplication(ApplicationIdentityReader.current())]
        accessRef.pointee = SecAccess(ItemAccess(applications: applications, descriptor: descriptor as String))
    }
}

/// The access object's ACL entries: change access, encrypt, decrypt (Apple's standard three).
@discardableResult
public func SecAccessCopyACLList(_ accessRef: SecAccess, _ aclList: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    let entries = [SecACL.Authorization.changeACL, .encrypt, .decrypt].map { SecACL(owner: accessRef, authorization: $0) }
    aclList.pointee = entries as CFArray
    return errSecSuccess
}

/// What an ACL entry holds: its programs (nil: any program), the access's descriptor, and its
/// prompt selector (none here: a prompt asks for the password whenever the keychain has one).
@discardableResult
public func SecACLCopyContents(_ acl: SecACL, _ applicationList: UnsafeMutablePointer<CFArray?>,
                               _ description: UnsafeMutablePointer<CFString?>,
                               _ promptSelector: UnsafeMutablePointer<SecKeychainPromptSelector>) -> OSStatus {
    let access = acl.owner.access
    if acl.authorization == .encrypt || access.anyApplication {
        applicationList.pointee = nil
    } else {
        applicationList.pointee = access.applications.map(SecTrustedApplication.init) as CFArray
    }
    description.pointee = access.descriptor as CFString
    promptSelector.pointee = []
    return errSecSuccess
}

/// Sets an ACL entry's programs (nil: any program) and the access's descriptor. The encrypting
/// entry allows every program and does not change.
@discardableResult
public func SecACLSetContents(_ acl: SecACL, _ applicationList: CFArray?, _ description: CFString,
                              _ promptSelector: SecKeychainPromptSelector) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let applications = try trustedApplications(applicationList)
        acl.owner.state.withLock { access in
            access.descriptor = description as String
            guard acl.authorization != .encrypt else { return }
            access.anyApplication = applications == nil
            access.applications = applications ?? []
        }
    }
}

/// The access object of a keychain item (an item without one: any program).
@discardableResult
public func SecKeychainItemCopyAccess(_ itemRef: SecKeychainItem, _ access: UnsafeMutablePointer<SecAccess?>) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (database, query) = try LegacyItems.locate(itemRef)
        let caller = AccessGroupConfiguration.currentCaller()
        guard let item = try engine({ () throws(StoreError) in try database.find(query, caller: caller, withSecrets: false) }).first else {
            throw SecStatusError(errSecItemNotFound, "the item is gone")
        }
        access.pointee = SecAccess(item.access ?? ItemAccess(anyApplication: true))
    }
}

/// Gives a keychain item a new access object. Through the agent, a program the item does not
/// trust is prompted first, as for any change of the item.
@discardableResult
public func SecKeychainItemSetAccess(_ itemRef: SecKeychainItem, _ access: SecAccess) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (database, query) = try LegacyItems.locate(itemRef)
        var changes = ItemChanges()
        changes.access = access.access
        let caller = AccessGroupConfiguration.currentCaller()
        _ = try engine { () throws(StoreError) in try database.update(query, with: changes, caller: caller) }
    }
}

/// The applications of a CFArray of ``SecTrustedApplication``; nil for nil.
func trustedApplications(_ list: CFArray?) throws(SecStatusError) -> [TrustedApplication]? {
    guard let list else { return nil }
    var applications: [TrustedApplication] = []
    for element in list as [AnyObject] {
        guard let app = element as? SecTrustedApplication else { throw .param("the list holds something that is not a SecTrustedApplication") }
        applications.append(app.application)
    }
    return applications
}
