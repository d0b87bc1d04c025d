import Foundation
import KeychainStore

/// Reads `SecItemUpdate`'s `attributesToUpdate`: every key but `kSecValueData` must be an
/// attribute of the class, else errSecNoSuchAttr, even `kSecClass` (`SecItemServer.c`'s `_SecItemUpdate`).
enum UpdateAttributes {
    static func changes(_ dictionary: CFDictionary, itemClass: ItemClass, querySync: AttributeValue?) throws(SecStatusError) -> ItemChanges {
        var changes = ItemChanges()
        var control: SecAccessControl?
        for (key, rawValue) in dictionary {
            guard let name = key as? String else { throw .param("a dictionary key is not a string") }
            let value = IncomingValue(rawValue)
            switch name {
            case QueryKey.valueData:
                guard case .data(let data) = value else { throw .param("kSecValueData is not data") }
                changes.secret = data
            case AttributeName.noLegacy.code, AttributeName.multiUser.code:
                continue
            case AttributeName.appClipItem.code, AttributeName.sharingGroup.code:
                throw .param("\(name) cannot be changed")
            case AttributeName.accessControl.code:
                guard case .accessControl(let c) = value else { throw .param("kSecAttrAccessControl is not a SecAccessControl") }
                control = c
            case AttributeName.synchronizable.code:
                guard let flag = value.looseBoolean else { throw .param("kSecAttrSynchronizable is not a boolean") }
                changes.attributes[.synchronizable] = .number(flag ? 1 : 0)
            default:
                guard name.utf8.count == 4, let attribute = itemClass.schema[name], !SecretServiceAttributes.privateNames.contains(name) else {
                    throw SecStatusError(errSecNoSuchAttr, "\(name) is not an attribute that can be updated")
                }
                guard let converted = value.attributeValue(for: attribute.kind) else {
                    throw .param("attribute \(name) has a value of the wrong type")
                }
                changes.attributes[name] = converted
            }
        }
        if let control {
            if changes.attributes[.accessible] != nil { throw .param("kSecAttrAccessible and kSecAttrAccessControl conflict") }
            if control.hasConstraints, (changes.attributes[.synchronizable] ?? querySync) == .number(1) {
                throw .param("an item with an access-control constraint cannot be synchronizable")
            }
            changes.attributes[.accessible] = .string(control.protection)
            changes.accessControlFlags = UInt64(control.flags.rawValue)
        }
        if let pdmn = changes.attributes[.accessible], !accessibilityClasses.contains(pdmn.utf8String ?? "") {
            throw .param("kSecAttrAccessible has a value that is not an accessibility class")
        }
        return changes
    }
}
