import Foundation
import KeychainStore
import Synchronization

/// The shared work of the file-keychain password functions.
enum LegacyItems {
    static func add(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], _ password: UnsafeRawPointer,
                    _ length: UInt32, _ keychain: SecKeychain?, _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) throws(SecStatusError) {
        let database = try FileKeychains.database(keychain)
        let item = NewItem(itemClass: itemClass, attributes: attributes, secret: Data(bytes(password, length)), access: .creatorOnly)
        let stored = try engine { () throws(StoreError) in try database.add(item, caller: AccessGroupConfiguration.currentCaller()) }
        itemRef?.pointee = SecKeychainItem(keychainPath: database.path, reference: stored.persistentReference.bytes)
    }

    static func find(_ itemClass: ItemClass, _ criteria: [String: AttributeValue], _ keychainOrArray: CFTypeRef?,
                     _ passwordLength: UnsafeMutablePointer<UInt32>?, _ passwordData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                     _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) throws(SecStatusError) {
        var query = ItemQuery(itemClass: itemClass)
        query.criteria = criteria
        let caller = AccessGroupConfiguration.currentCaller()
        let (database, item) = try firstMatch(query, in: try FileKeychains.databases(keychainOrArray), caller: caller,
                                              withSecret: passwordData != nil)
        if let passwordData {
            passwordData.pointee = PasswordBuffers.allocate(copying: item.secret ?? Data())
        }
        passwordLength?.pointee = UInt32(item.secret?.count ?? 0)
        itemRef?.pointee = SecKeychainItem(keychainPath: database.path, reference: item.persistentReference.bytes)
    }

    /// The first item that matches, keychain by keychain in order (``KeychainSearch``).
    static func firstMatch(_ query: ItemQuery, in databases: [any KeychainBackend], caller: Caller,
                           withSecret: Bool) throws(SecStatusError) -> (any KeychainBackend, StoredItem) {
        var query = query
        query.limit = 1
        let found = try engine { () throws(StoreError) in try KeychainSearch.find(query, in: databases, caller: caller, withSecrets: withSecret) }
        return (found[0].keychain, found[0].item)
    }

    /// The keychain and the query that find exactly this item.
    static func locate(_ item: SecKeychainItem) throws(SecStatusError) -> (any KeychainBackend, ItemQuery) {
        guard let reference = PersistentReference(item.reference) else { throw .param("not a keychain item") }
        let database = try FileKeychains.database(SecKeychain(path: item.keychainPath))
        var query = ItemQuery(itemClass: reference.itemClass)
        query.persistentReference = reference
        return (database, query)
    }
}

/// The password buffers handed to callers, remembered with their sizes so that releasing one
/// zeroes it before freeing it.
enum PasswordBuffers {
    private static let sizes = Mutex<[UInt: Int]>([:])  // address -> size

    static func allocate(copying secret: Data) -> UnsafeMutableRawPointer {
        let buffer = malloc(max(secret.count, 1))!
        secret.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: secret.count)
        sizes.withLock { $0[UInt(bitPattern: buffer)] = secret.count }
        return buffer
    }

    static func release(_ buffer: UnsafeMutableRawPointer) {
        if let size = sizes.withLock({ $0.removeValue(forKey: UInt(bitPattern: buffer)) }) { explicit_bzero(buffer, size) }
        free(buffer)
    }
}

/// Attributes from C buffers and attribute lists.
enum LegacyAttributes {
    /// String attributes from (pointer, length) pairs; null or empty ones are left out. Bytes that
    /// are not UTF-8 are kept as data.
    static func strings(_ buffers: [String: (UnsafePointer<CChar>?, UInt32)]) -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        for (name, (pointer, length)) in buffers {
            let raw = bytes(pointer.map(UnsafeRawPointer.init), length)
            guard !raw.isEmpty else { continue }
            result[name] = String(validating: raw, as: UTF8.self).map(AttributeValue.string) ?? .data(Data(raw))
        }
        return result
    }

    /// Port, protocol and authentication type; zero and `.any` are left out.
    static func internet(port: UInt16, protocol: SecProtocolType, authenticationType: SecAuthenticationType) -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        if port != 0 { result[.port] = .number(Int64(port)) }
        if `protocol` != .any { result[.protocol] = .string(`protocol`.rawValue.fourCharacterString) }
        if authenticationType != .any { result[.authenticationType] = .string(authenticationType.rawValue.fourCharacterString) }
        return result
    }

    /// Four-byte attributes holding numbers.
    private static let numbers: Set<String> = [AttributeName.creator.code, AttributeName.type.code, AttributeName.scriptCode.code, AttributeName.isInvisible.code, AttributeName.isNegative.code, AttributeName.hasCustomIcon.code, AttributeName.port.code]
    /// Four-byte attributes holding four-character codes, stored as their characters.
    private static let codes: Set<String> = [AttributeName.protocol.code, AttributeName.authenticationType.code]

    /// The wire name and value of one tagged buffer.
    static func value(of attribute: SecKeychainAttribute, in itemClass: ItemClass) throws(SecStatusError) -> (String, AttributeValue) {
        let name = attribute.tag.fourCharacterString
        guard let descriptor = itemClass.schema[name] else {
            throw SecStatusError(errSecNoSuchAttr, "the item class has no attribute \(name)")
        }
        let raw = bytes(attribute.data.map(UnsafeRawPointer.init), attribute.length)
        if numbers.contains(name) || codes.contains(name) {
            guard raw.count == 4 else { throw .param("attribute \(name) must be 4 bytes") }
            let number = raw.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            return (name, codes.contains(name) ? .string(number.fourCharacterString) : .number(Int64(number)))
        }
        guard descriptor.kind != .date else {
            throw SecStatusError(errSecReadOnlyAttr, "dates are kept by the keychain")
        }
        return (name, String(validating: raw, as: UTF8.self).map(AttributeValue.string) ?? .data(Data(raw)))
    }
}
