import Foundation
import KeychainServices

/// A keychain as a dictionary of values for one service: each key is a generic password whose
/// `kSecAttrService` is the service and `kSecAttrAccount` the key.
///
/// ```swift
/// let keychain = Keychain(service: "com.example.app")
/// try keychain.set("s3cret", forKey: "api-token")
/// let token = try keychain.string(forKey: "api-token")
/// keychain["api-token"] = nil
/// ```
///
/// A value of type `Keychain` is cheap and immutable; configure copies with
/// ``synchronizable(_:)``, ``accessibility(_:)``, ``label(_:)`` and ``comment(_:)``. It is
/// `Sendable` and safe to use from any thread: every call is one keychain operation.
public struct Keychain: Sendable, Hashable {
    /// The items' `kSecAttrService`.
    public let service: String
    /// The access group items are added to and looked up in; nil: the process's default group
    /// for adds and every group it has for look-ups.
    public let accessGroup: String?
    /// Whether this keychain's items sync. A synchronizable and a local item of the same key are
    /// two items, as in Apple's keychain.
    public private(set) var isSynchronizable = false
    /// When items this keychain writes can be read.
    public private(set) var accessibilityValue: Accessibility = .whenUnlocked
    public private(set) var labelValue: String?
    public private(set) var commentValue: String?

    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// The application's keychain: the bundle identifier when there is one, else the executable's
    /// name (FXKeychain's `defaultKeychain`).
    public static var `default`: Keychain {
        Keychain(service: Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName)
    }

    // MARK: - Configuration by copy

    /// A copy whose items sync (or not).
    public func synchronizable(_ synchronizable: Bool) -> Keychain {
        var copy = self
        copy.isSynchronizable = synchronizable
        return copy
    }

    /// A copy that writes items with this accessibility.
    public func accessibility(_ accessibility: Accessibility) -> Keychain {
        var copy = self
        copy.accessibilityValue = accessibility
        return copy
    }

    /// A copy that writes items with this label (`kSecAttrLabel`).
    public func label(_ label: String?) -> Keychain {
        var copy = self
        copy.labelValue = label
        return copy
    }

    /// A copy that writes items with this comment (`kSecAttrComment`).
    public func comment(_ comment: String?) -> Keychain {
        var copy = self
        copy.commentValue = comment
        return copy
    }

    // MARK: - Queries

    /// The query for one key (or, with nil, every key) of this keychain.
    func query(forKey key: String?) -> SecItemClient.Query {
        var query: SecItemClient.Query = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrSynchronizable as String: isSynchronizable,
        ]
        if let key { query[kSecAttrAccount as String] = key }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// What a write sets besides the data.
    func writeAttributes(_ data: Data) -> SecItemClient.Query {
        var attributes: SecItemClient.Query = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: accessibilityValue.attributeValue,
        ]
        if let labelValue { attributes[kSecAttrLabel as String] = labelValue }
        if let commentValue { attributes[kSecAttrComment as String] = commentValue }
        return attributes
    }
}
