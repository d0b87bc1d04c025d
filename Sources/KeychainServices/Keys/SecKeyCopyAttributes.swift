import Foundation
import KeychainKeys
import KeychainModel

/// The key's attributes as Apple reports them: class, key class and type (as strings), the
/// application label (SHA-1 of the public key), sizes, the capability flags, and
/// `kSecValueData` (the external representation, left out for a key that is not extractable).
/// A key from the keychain adds its stored attributes (label, tag, access group...).
@discardableResult
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    let isPrivate = key.isPrivate
    // The stored attributes' set (ItemAttributes), as Apple's dictionary gives them: the key
    // class and type as strings, sizes as numbers, flags as booleans.
    var attributes: [String: Any] = [QueryKey.itemClass: ItemClass.key.rawValue]
    for (name, value) in ItemAttributes.key(key.publicKey, isPrivate: isPrivate, isExtractable: key.isExtractable) {
        switch (name, value) {
        case (AttributeName.keyClass.code, .number(let n)), (AttributeName.type.code, .number(let n)): attributes[name] = String(n)
        case (AttributeName.keySizeInBits.code, _), (AttributeName.effectiveKeySize.code, _), (AttributeName.applicationLabel.code, _): attributes[name] = ResultBuilder.bridge(value)
        case (_, .number(let n)): attributes[name] = n != 0
        default: attributes[name] = ResultBuilder.bridge(value)
        }
    }
    for (name, value) in key.storedAttributes {
        attributes[name] = ResultBuilder.bridge(value)
    }
    if (key.isExtractable || !isPrivate), let data = try? KeyOperations.externalRepresentation(key) {
        attributes[QueryKey.valueData] = Data(data)
    }
    return NSDictionary(dictionary: attributes)
}
