import Foundation
import KeychainKeys

/// The key's attributes as Apple reports them: class, key class and type (as strings), the
/// application label (SHA-1 of the public key), sizes, the capability flags, and
/// `kSecValueData` (the external representation, left out for a key that is not extractable).
/// A key from the keychain adds its stored attributes (label, tag, access group...).
@discardableResult
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    let isPrivate = key.isPrivate
    var attributes: [String: Any] = [
        "class": "keys",
        "kcls": isPrivate ? "1" : "0",
        "klbl": key.applicationLabel,
        "perm": true, "priv": true, "modi": true,
        "type": String(key.kind.appleKeyType),
        "bsiz": NSNumber(value: key.kind.bits), "esiz": NSNumber(value: key.kind.bits),
        "sens": !key.isExtractable && isPrivate, "asen": false, "extr": key.isExtractable || !isPrivate, "next": false,
        "encr": !isPrivate, "decr": isPrivate, "drve": true, "sign": isPrivate, "vrfy": !isPrivate,
        "snrc": false, "vyrc": false, "wrap": !isPrivate, "unwp": isPrivate,
    ]
    for (name, value) in key.storedAttributes {
        attributes[name] = ResultBuilder.bridge(value)
    }
    if (key.isExtractable || !isPrivate), let data = try? KeyOperations.externalRepresentation(key) {
        attributes["v_Data"] = Data(data)
    }
    return NSDictionary(dictionary: attributes)
}
