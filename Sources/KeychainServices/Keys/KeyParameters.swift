import Foundation
import KeychainKeys
import KeychainModel

/// The parameters of `SecKeyCreateRandomKey` and `SecKeyCreateWithData`, read the way Apple reads
/// them: key type and size at the top level; `kSecPrivateKeyAttrs` and `kSecPublicKeyAttrs`
/// dictionaries over the top-level attributes for each half (Apple's `merge_params`).
struct KeyParameters {
    let entries: [String: Any]

    init(_ dictionary: CFDictionary) throws(KeyError) {
        var entries: [String: Any] = [:]
        for (key, value) in dictionary {
            guard let name = key as? String else { throw .param("a parameter key is not a string") }
            entries[name] = value
        }
        self.entries = entries
    }

    /// `kSecAttrKeyType` as Apple's number (73 EC, 42 RSA); strings and numbers both accepted.
    func keyType() throws(KeyError) -> Int {
        guard let value = entries[.type] else { throw .param("kSecAttrKeyType is missing") }
        guard let type = Self.integer(value) else { throw .param("kSecAttrKeyType is not a key type") }
        return type
    }

    /// `kSecAttrKeySizeInBits`, if given.
    func keySize() throws(KeyError) -> Int? {
        guard let value = entries[.keySizeInBits] else { return nil }
        guard let size = Self.integer(value) else { throw .param("kSecAttrKeySizeInBits is not a number") }
        return size
    }

    /// `kSecAttrKeyClass` as Apple's number (0 public, 1 private).
    func keyClass() throws(KeyError) -> Int {
        guard let value = entries[.keyClass], let keyClass = Self.integer(value), keyClass == 0 || keyClass == 1 else {
            throw .param("kSecAttrKeyClass must be kSecAttrKeyClassPublic or kSecAttrKeyClassPrivate")
        }
        return keyClass
    }

    /// The attributes for one half: its sub-dictionary over the top level, without the keys
    /// that only belong at the top.
    func attributes(forPrivateKey isPrivate: Bool) -> [String: Any] {
        var merged = entries
        if let sub = entries[isPrivate ? "private" : "public"] as? NSDictionary {
            for (key, value) in sub { if let name = key as? String { merged[name] = value } }
        }
        for name in ["private", "public", AttributeName.type.code, AttributeName.keySizeInBits.code] { merged.removeValue(forKey: name) }
        return merged
    }

    static func integer(_ value: Any) -> Int? {
        if let string = value as? String { return Int(string) }
        if let number = value as? NSNumber { return number.intValue }
        if let int = value as? Int { return int }
        return nil
    }

    static func boolean(_ value: Any?) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        return nil
    }
}
