import Foundation
import KeychainServices

extension Keychain {
    /// Stores a string (as its UTF-8 bytes), replacing any value the key had.
    public func set(_ value: String, forKey key: String) throws(KeychainError) {
        try set(Data(value.utf8), forKey: key)
    }

    /// Stores data, replacing any value the key had (an update, never delete-then-add).
    public func set(_ value: Data, forKey key: String) throws(KeychainError) {
        try SecItemClient.upsert(query(forKey: key), writeAttributes(value))
    }

    /// Stores any `Encodable` value as a binary property list.
    public func set<T: Encodable>(_ value: T, forKey key: String) throws(KeychainError) {
        let data: Data
        do {
            data = try PropertyListValue.encode(value)
        } catch {
            throw KeychainError(status: errSecParam, operation: "encode", queryKeys: [],
                                message: "the value cannot be stored as a property list", code: .invalidParameter)
        }
        try set(data, forKey: key)
    }

    /// The data stored under a key, or nil.
    public func data(forKey key: String) throws(KeychainError) -> Data? {
        var query = query(forKey: key)
        query[kSecReturnData as String] = true
        guard let result = try SecItemClient.copyMatching(query) else { return nil }
        guard let data = result as? Data else {
            throw KeychainError(status: errSecDecode, operation: "SecItemCopyMatching", queryKeys: Array(query.keys),
                                message: "the keychain returned no data", code: .unexpectedData)
        }
        return data
    }

    /// The string stored under a key, or nil; data that is not UTF-8 is a `.decode` error.
    public func string(forKey key: String) throws(KeychainError) -> String? {
        guard let data = try data(forKey: key) else { return nil }
        guard let string = String(data: data, encoding: .utf8) else {
            throw KeychainError(status: errSecDecode, operation: "decode", queryKeys: [], message: "the value is not UTF-8 text",
                                code: .decode)
        }
        return string
    }

    /// The value stored under a key, decoded as `type`, or nil; a value of another shape is a
    /// `.decode` error, never a wrong value.
    public func value<T: Decodable>(_ type: T.Type, forKey key: String) throws(KeychainError) -> T? {
        guard let data = try data(forKey: key) else { return nil }
        do {
            return try PropertyListValue.decode(type, from: data)
        } catch {
            throw KeychainError(status: errSecDecode, operation: "decode", queryKeys: [],
                                message: "the value is not a property list of type \(T.self)", code: .decode)
        }
    }

    /// Whether a value is stored under the key.
    public func contains(_ key: String) throws(KeychainError) -> Bool {
        // Without a return key a match gives no result at all: ask for the cheapest one.
        var query = query(forKey: key)
        query[kSecReturnPersistentRef as String] = true
        return try SecItemClient.copyMatching(query) != nil
    }

    /// Every key of this keychain, in the order they were first stored.
    public func allKeys() throws(KeychainError) -> [String] {
        try SecItemClient.attributeList(query(forKey: nil)).map { KeychainItem(attributes: $0).account }
    }

    /// Removes a key's value; removing a missing key is not an error.
    public func removeValue(forKey key: String) throws(KeychainError) {
        _ = try SecItemClient.delete(query(forKey: key))
    }

    /// Removes every value of this keychain (its service, group and synchronizability).
    public func removeAll() throws(KeychainError) {
        _ = try SecItemClient.delete(query(forKey: nil))
    }

    /// Moves a key's item between local and synchronizable in one update: the item is never
    /// missing, and if the other kind already exists the call fails (`.duplicateItem`) and
    /// changes nothing (the seed's convertToSynced / convertToLocal).
    public func moveItem(forKey key: String, toSynchronizable synchronizable: Bool) throws(KeychainError) {
        let source = self.synchronizable(!synchronizable).query(forKey: key)
        guard try SecItemClient.update(source, [kSecAttrSynchronizable as String: synchronizable]) else {
            throw KeychainError(status: errSecItemNotFound, operation: "SecItemUpdate", queryKeys: Array(source.keys))
        }
    }
}
