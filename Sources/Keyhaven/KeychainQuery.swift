import Foundation
import KeychainServices

/// A query for generic passwords by service and account, with SAMKeychain's
/// `SAMKeychainQuery` semantics.
///
/// ```swift
/// var query = KeychainQuery(service: "com.example.app", account: "alice")
/// query.password = "s3cret"
/// try query.save()
///
/// var lookup = KeychainQuery(service: "com.example.app", account: "alice")
/// try lookup.fetch()
/// print(lookup.password ?? "")
/// ```
public struct KeychainQuery: Sendable, Hashable {
    public var service: String?
    public var account: String?
    public var label: String?
    public var accessGroup: String?
    /// Which items the query sees and what ``save()`` makes (SAMKeychain's meaning: `.any`
    /// queries both kinds and saves a local item).
    public var synchronizationMode: SynchronizationMode = .any
    /// The password data ``save()`` stores and ``fetch()`` fills in.
    public var passwordData: Data?

    public init(service: String? = nil, account: String? = nil) {
        self.service = service
        self.account = account
    }

    /// The password as UTF-8 text (nil when there is none or it is not text).
    public var password: String? {
        get { passwordData.flatMap { String(data: $0, encoding: .utf8) } }
        set { passwordData = newValue.map { Data($0.utf8) } }
    }

    /// Whether synchronizable items reach the user's other machines: true only while this
    /// keychain home takes part in sync (`keyhaven sync create` or `join`, until `sync leave` or
    /// a removal); read anew on every call.
    public static var isSynchronizationAvailable: Bool {
        #if os(Linux)
        keychainHomeSynchronizes()
        #else
        false
        #endif
    }

    /// Stores ``passwordData`` under the service and account, updating an existing item.
    /// Needs a service, an account and password data (`.invalidParameter` otherwise).
    public func save() throws(KeychainError) {
        guard service != nil, account != nil, let passwordData else {
            throw KeychainError(status: errSecParam, operation: "save", queryKeys: Array(query(forAdd: true).keys),
                                message: "saving needs a service, an account and a password", code: .invalidParameter)
        }
        var attributes: SecItemClient.Query = [kSecValueData as String: passwordData]
        if let label { attributes[kSecAttrLabel as String] = label }
        if try SecItemClient.update(query(forAdd: false), attributes) { return }
        try SecItemClient.add(query(forAdd: true).merging(attributes) { _, new in new })
    }

    /// Reads the first matching item's password into ``passwordData``; `.itemNotFound` when none
    /// matches.
    public mutating func fetch() throws(KeychainError) {
        var query = query(forAdd: false)
        query[kSecReturnData as String] = true
        guard let data = try SecItemClient.copyMatching(query) as? Data else {
            throw KeychainError(status: errSecItemNotFound, operation: "SecItemCopyMatching", queryKeys: Array(query.keys))
        }
        passwordData = data
    }

    /// Every matching item's attributes (no passwords), in the order they were added.
    public func fetchAll() throws(KeychainError) -> [KeychainItem] {
        try SecItemClient.attributeList(query(forAdd: false)).map(KeychainItem.init(attributes:))
    }

    /// Deletes every matching item; `.itemNotFound` when none matches.
    public func delete() throws(KeychainError) {
        let query = query(forAdd: false)
        guard try SecItemClient.delete(query) else {
            throw KeychainError(status: errSecItemNotFound, operation: "SecItemDelete", queryKeys: Array(query.keys))
        }
    }

    /// The dictionary for a look-up (or an add): class, service, account, group, synchronizable.
    func query(forAdd: Bool) -> SecItemClient.Query {
        var query: SecItemClient.Query = [kSecClass as String: kSecClassGenericPassword]
        if let service { query[kSecAttrService as String] = service }
        if let account { query[kSecAttrAccount as String] = account }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        if let sync = synchronizationMode.attributeValue(forAdd: forAdd) { query[kSecAttrSynchronizable as String] = sync }
        return query
    }
}
