import Foundation
import KeychainServices

/// Short spellings for building Apple-style dictionaries in tests.
enum K {
    static let `class` = kSecClass as String
    static let account = kSecAttrAccount as String
    static let service = kSecAttrService as String
    static let server = kSecAttrServer as String
    static let group = kSecAttrAccessGroup as String
    static let sync = kSecAttrSynchronizable as String
    static let label = kSecAttrLabel as String
    static let data = kSecValueData as String
    static let persistentRef = kSecValuePersistentRef as String
    static let returnData = kSecReturnData as String
    static let returnAttributes = kSecReturnAttributes as String
    static let returnRef = kSecReturnRef as String
    static let returnPersistentRef = kSecReturnPersistentRef as String
    static let limit = kSecMatchLimit as String
}

func genericPassword(_ account: String = "alice", service: String = "svc", _ extra: [String: Any] = [:]) -> [String: Any] {
    var item: [String: Any] = [K.class: kSecClassGenericPassword, K.account: account, K.service: service]
    item.merge(extra) { _, new in new }
    return item
}

func genericPassword(_ extra: [String: Any]) -> [String: Any] { genericPassword("alice", service: "svc", extra) }

func internetPassword(_ extra: [String: Any]) -> [String: Any] { internetPassword(server: "www.example.com", account: "smith", extra) }

func internetPassword(server: String = "www.example.com", account: String = "smith", _ extra: [String: Any] = [:]) -> [String: Any] {
    var item: [String: Any] = [K.class: kSecClassInternetPassword, K.server: server, K.account: account]
    item.merge(extra) { _, new in new }
    return item
}

func add(_ attributes: [String: Any]) -> OSStatus { SecItemAdd(attributes as CFDictionary, nil) }

func addReturning(_ attributes: [String: Any]) -> (OSStatus, CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemAdd(attributes as CFDictionary, &result)
    return (status, result)
}

func copy(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    return (status, result)
}

func update(_ query: [String: Any], _ attributes: [String: Any]) -> OSStatus {
    SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
}

func delete(_ query: [String: Any]) -> OSStatus { SecItemDelete(query as CFDictionary) }

/// The secret stored for a query, or nil.
func secret(_ query: [String: Any]) -> Data? {
    var q = query
    q[K.returnData] = true
    return copy(q).1 as? Data
}

/// The attributes stored for a query, or nil.
func attributes(_ query: [String: Any]) -> [String: Any]? {
    var q = query
    q[K.returnAttributes] = true
    return copy(q).1 as? [String: Any]
}

extension Data {
    init(_ string: String) { self.init(string.utf8) }
}
