import Foundation
import KeychainStore

/// Adds one item to the keychain.
///
/// Apple's data-protection keychain behaviour: defaults for the access group (the caller's first),
/// accessibility (`kSecAttrAccessibleWhenUnlocked`) and dates; `errSecDuplicateItem` when an item
/// with the same primary key exists. With `kSecReturn*` keys, `result` receives the new item in
/// the shape they ask for; without them it is left as it was.
///
/// Unlike iOS, where a `kSecMatch*` key makes Add report success without storing anything, match
/// keys are ignored and the item is stored, as macOS does (docs/compatibility.md).
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let dictionary = try ItemDictionary(attributes, for: .add)
        if dictionary.isIdentity {
            guard let identity = dictionary.valueRef as? SecIdentity else {
                throw .param("an identity is added with kSecValueRef holding a SecIdentity")
            }
            let status = IdentityItems.add(identity, entries: attributes, returns: dictionary.returns, limit: dictionary.limit,
                                           result: result)
            guard status == errSecSuccess else { throw SecStatusError(status, "the identity could not be added") }
            return
        }
        var item = NewItem(itemClass: dictionary.itemClass, attributes: dictionary.attributes, secret: dictionary.valueData)
        if let control = dictionary.accessControl {
            item.attributes[.accessible] = .string(control.protection)
            item.accessControlFlags = UInt64(control.flags.rawValue)
        }
        // The program that adds an item is trusted by it, and no other (macOS's default access).
        item.access = dictionary.access ?? .creatorOnly
        let caller = dictionary.caller
        let database = try SecItemTargets.forAdd(dictionary)
        let stored = try engine { () throws(StoreError) in try database.add(item, caller: caller) }
        if let result, dictionary.returns.count > 0 {
            let builder = ResultBuilder(returns: dictionary.returns, forAdd: true)
            if let value = builder.result(for: [(database, stored)], limit: .one) { result.pointee = value }
        }
    }
}

/// Finds items matching a query and returns them in the shape its `kSecReturn*` keys ask for.
///
/// Without `kSecMatchLimit` at most one item is returned; `kSecMatchLimitAll` returns an array in
/// the order the items were added. Without `kSecAttrSynchronizable`, only items that are not
/// synchronizable match. When nothing matches, `errSecItemNotFound` and `result` is untouched.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let dictionary = try ItemDictionary(query, for: .copyMatching)
        let caller = dictionary.caller
        if dictionary.isIdentity {
            let identities = try IdentityItems.find(dictionary, caller: caller, limit: dictionary.limit.maximum)
            let builder = ResultBuilder(returns: dictionary.returns, forAdd: false)
            if let result, let value = builder.result(for: identities, limit: dictionary.limit) { result.pointee = value }
            return
        }
        let items = try SecItemTargets.find(dictionary, caller: caller)
        let builder = ResultBuilder(returns: dictionary.returns, forAdd: false)
        if let result, let value = builder.result(for: items, limit: dictionary.limit) { result.pointee = value }
    }
}

/// Changes every item matching `query` with `attributesToUpdate`, all or nothing.
///
/// `errSecItemNotFound` when nothing matches; `errSecDuplicateItem` (and no change at all) when
/// the new attributes would collide with another item.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let dictionary = try ItemDictionary(query, for: .update)
        if dictionary.isIdentity {
            return try IdentityItems.update(dictionary, with: attributesToUpdate, caller: dictionary.caller)
        }
        let changes = try UpdateAttributes.changes(attributesToUpdate, itemClass: dictionary.itemClass,
                                                   querySync: dictionary.attributes[.synchronizable])
        let caller = dictionary.caller
        try SecItemTargets.write(dictionary) { (database) throws(StoreError) in
            try database.update(dictionary.query, with: changes, caller: caller)
        }
    }
}

/// Deletes every item matching `query`; `errSecItemNotFound` when nothing matches.
///
/// `kSecUseTombstones` set to true leaves a tombstone for each deleted item.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let dictionary = try ItemDictionary(query, for: .delete)
        let caller = dictionary.caller
        if dictionary.isIdentity { return try IdentityItems.delete(dictionary, caller: caller) }
        try SecItemTargets.write(dictionary) { (database) throws(StoreError) in
            try database.delete(dictionary.query, caller: caller, makeTombstones: dictionary.useTombstones == true)
        }
    }
}
