import Foundation
import KeychainKeys
import KeychainStore

/// `kSecValueRef`: the object an item is made from (Add) or that names an item (a query).
extension ItemDictionary {
    /// Whether results need the items' secrets: data asked for, or a key's ref (made from its data).
    var needsSecrets: Bool { returns.data || (returns.ref && itemClass == .key) }

    mutating func readValueRef(_ value: Any, _ operation: SecItemOperation) throws(SecStatusError) {
        guard let key = value as? SecKey, itemClass == .key else {
            throw .param("kSecValueRef holds no object of a class this keychain stores")
        }
        valueRef = key
        if operation == .add {
            // The key's own attributes, under any the caller gave (Apple merges the ref's
            // attribute dictionary the same way); its data is its external representation.
            for (name, attribute) in KeyItemAttributes.of(key) where attributes[name] == nil {
                attributes[name] = attribute
            }
            valueData = key.key.withExternalRepresentation { Data($0) }
        } else {
            attributes["klbl"] = .data(key.key.applicationLabel)
            attributes["kcls"] = .number(key.key.isPrivate ? 1 : 0)
        }
    }
}

/// What a key stores as attributes: Apple's `SecKeyCopyAttributes` set, as stored numbers.
enum KeyItemAttributes {
    static func of(_ key: SecKey) -> [String: AttributeValue] {
        let isPrivate = key.key.isPrivate
        let extractable = key.isExtractable || !isPrivate
        let flags: [String: Bool] = [
            "perm": true, "priv": true, "modi": true, "sens": !extractable, "asen": !extractable,
            "extr": extractable, "next": !extractable, "encr": !isPrivate, "decr": isPrivate, "drve": true,
            "sign": isPrivate, "vrfy": !isPrivate, "snrc": false, "vyrc": false, "wrap": !isPrivate, "unwp": isPrivate,
        ]
        var attributes = flags.mapValues { AttributeValue.number($0 ? 1 : 0) }
        attributes["kcls"] = .number(isPrivate ? 1 : 0)
        attributes["klbl"] = .data(key.key.applicationLabel)
        attributes["type"] = .number(Int64(key.key.kind.appleKeyType))
        attributes["bsiz"] = .number(Int64(key.key.kind.bits))
        attributes["esiz"] = .number(Int64(key.key.kind.bits))
        return attributes
    }

    /// The `SecKey` a stored key item holds (nil for an item that is not a usable key).
    static func key(from item: StoredItem) -> SecKey? {
        guard item.itemClass == .key, let secret = item.secret,
              case .number(let type)? = item.attributes["type"], case .number(let keyClass)? = item.attributes["kcls"],
              let key = try? AsymmetricKey(externalRepresentation: Array(secret), keyType: Int(type), isPrivate: keyClass == 1)
        else { return nil }
        return SecKey(key, isExtractable: isExtractable(item), storedAttributes: item.attributes)
    }

    /// Whether a key item's material may be returned (`kSecAttrIsExtractable`, true when unset).
    static func isExtractable(_ item: StoredItem) -> Bool {
        guard item.itemClass == .key, case .number(let flag)? = item.attributes["extr"] else { return true }
        return flag != 0 || item.attributes["kcls"] == .number(0)
    }
}
