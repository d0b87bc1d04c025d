import Foundation
import KeychainStore

/// Adds a generic password to a keychain (nil: the default keychain).
@discardableResult
public func SecKeychainAddGenericPassword(_ keychain: SecKeychain?, _ serviceNameLength: UInt32, _ serviceName: UnsafePointer<CChar>?,
                                          _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                          _ passwordLength: UInt32, _ passwordData: UnsafeRawPointer,
                                          _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let attributes = LegacyAttributes.strings([AttributeName.service.code: (serviceName, serviceNameLength), AttributeName.account.code: (accountName, accountNameLength)])
        try LegacyItems.add(.genericPassword, attributes, passwordData, passwordLength, keychain, itemRef)
    }
}

/// Finds the first generic password with this service and account (a null or empty one matches
/// any) in a keychain, an array of keychains, or (nil) the search list. The password comes back
/// in a buffer to release with ``SecKeychainItemFreeContent(_:_:)``.
@discardableResult
public func SecKeychainFindGenericPassword(_ keychainOrArray: CFTypeRef?, _ serviceNameLength: UInt32, _ serviceName: UnsafePointer<CChar>?,
                                           _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                           _ passwordLength: UnsafeMutablePointer<UInt32>?,
                                           _ passwordData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                           _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let criteria = LegacyAttributes.strings([AttributeName.service.code: (serviceName, serviceNameLength), AttributeName.account.code: (accountName, accountNameLength)])
        try LegacyItems.find(.genericPassword, criteria, keychainOrArray, passwordLength, passwordData, itemRef)
    }
}

/// Adds an internet password to a keychain (nil: the default keychain).
@discardableResult
public func SecKeychainAddInternetPassword(_ keychain: SecKeychain?, _ serverNameLength: UInt32, _ serverName: UnsafePointer<CChar>?,
                                           _ securityDomainLength: UInt32, _ securityDomain: UnsafePointer<CChar>?,
                                           _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                           _ pathLength: UInt32, _ path: UnsafePointer<CChar>?, _ port: UInt16,
                                           _ protocol: SecProtocolType, _ authenticationType: SecAuthenticationType,
                                           _ passwordLength: UInt32, _ passwordData: UnsafeRawPointer,
                                           _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        var attributes = LegacyAttributes.strings([AttributeName.server.code: (serverName, serverNameLength), AttributeName.securityDomain.code: (securityDomain, securityDomainLength),
                                                   AttributeName.account.code: (accountName, accountNameLength), AttributeName.path.code: (path, pathLength)])
        attributes.merge(LegacyAttributes.internet(port: port, protocol: `protocol`, authenticationType: authenticationType)) { $1 }
        try LegacyItems.add(.internetPassword, attributes, passwordData, passwordLength, keychain, itemRef)
    }
}

/// Finds the first internet password matching the given attributes (null, empty, zero or `.any`
/// ones match anything).
@discardableResult
public func SecKeychainFindInternetPassword(_ keychainOrArray: CFTypeRef?, _ serverNameLength: UInt32, _ serverName: UnsafePointer<CChar>?,
                                            _ securityDomainLength: UInt32, _ securityDomain: UnsafePointer<CChar>?,
                                            _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                            _ pathLength: UInt32, _ path: UnsafePointer<CChar>?, _ port: UInt16,
                                            _ protocol: SecProtocolType, _ authenticationType: SecAuthenticationType,
                                            _ passwordLength: UnsafeMutablePointer<UInt32>?,
                                            _ passwordData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                            _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        var criteria = LegacyAttributes.strings([AttributeName.server.code: (serverName, serverNameLength), AttributeName.securityDomain.code: (securityDomain, securityDomainLength),
                                                 AttributeName.account.code: (accountName, accountNameLength), AttributeName.path.code: (path, pathLength)])
        criteria.merge(LegacyAttributes.internet(port: port, protocol: `protocol`, authenticationType: authenticationType)) { $1 }
        try LegacyItems.find(.internetPassword, criteria, keychainOrArray, passwordLength, passwordData, itemRef)
    }
}

/// Changes an item's attributes (a list of tagged buffers, may be nil) and, when `data` is not
/// nil, its password. Attribute tags are ``SecItemAttr`` raw values.
@discardableResult
public func SecKeychainItemModifyAttributesAndData(_ itemRef: SecKeychainItem, _ attrList: UnsafePointer<SecKeychainAttributeList>?,
                                                   _ length: UInt32, _ data: UnsafeRawPointer?) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (database, query) = try LegacyItems.locate(itemRef)
        var changes = ItemChanges()
        if let list = attrList?.pointee, let attributes = list.attr {
            for index in 0..<Int(list.count) {
                let attribute = attributes[index]
                let (name, value) = try LegacyAttributes.value(of: attribute, in: query.itemClass)
                changes.attributes[name] = value
            }
        }
        if let data { changes.secret = Data(bytes(data, length)) }
        _ = try engine { () throws(StoreError) in
            try database.update(query, with: changes, caller: AccessGroupConfiguration.currentCaller())
        }
    }
}

/// Deletes an item from its keychain.
@discardableResult
public func SecKeychainItemDelete(_ itemRef: SecKeychainItem) -> OSStatus {
    secCall { () throws(SecStatusError) in
        let (database, query) = try LegacyItems.locate(itemRef)
        _ = try engine { () throws(StoreError) in
            try database.delete(query, caller: AccessGroupConfiguration.currentCaller(), makeTombstones: false)
        }
    }
}

/// Releases a password buffer returned by a find function (its bytes are zeroed first).
///
/// Attribute lists are only ever allocated by the caller here, so `attrList` is not touched.
@discardableResult
public func SecKeychainItemFreeContent(_ attrList: UnsafeMutablePointer<SecKeychainAttributeList>?,
                                       _ data: UnsafeMutableRawPointer?) -> OSStatus {
    if let data { PasswordBuffers.release(data) }
    return errSecSuccess
}
