import Foundation
import KeychainStore

/// The key grammar: a 4-character key is an attribute; otherwise the first letter says what it
/// is (`c`lass, `m`atch, `r`eturn, `u`se, `v`alue; `f` is ignored).
extension ItemDictionary {
    mutating func read(_ key: String, _ value: IncomingValue, _ operation: SecItemOperation) throws(SecStatusError) {
        if key.utf8.count == 4 { return try readAttribute(key, value, operation) }
        guard key.utf8.count > 1, let first = key.first else { throw .param("unknown dictionary key") }
        switch first {
        case "c": guard key == QueryKey.itemClass else { throw .param("unknown dictionary key") }
        case "m": try readMatch(key, value)
        case "r": try readReturn(key, value)
        case "u": try readUse(key, value, operation)
        case "v": try readValue(key, value)
        case "f": break
        default: throw .param("unknown dictionary key")
        }
    }

    private mutating func readAttribute(_ key: String, _ value: IncomingValue, _ operation: SecItemOperation) throws(SecStatusError) {
        switch key {
        case AttributeName.noLegacy.code, QueryKey.uuid: return
        case AttributeName.appClipItem.code: throw .param("kSecAttrAppClipItem may not be set")
        case AttributeName.multiUser.code:
            switch value {
            case .data(let d) where d.isEmpty || d.count == 16: return
            case .null, .uuid: return
            default: throw .param("kSecAttrMultiUser has a wrong value")
            }
        case AttributeName.accessControl.code:
            guard case .accessControl(let control) = value else { throw .param("kSecAttrAccessControl is not a SecAccessControl") }
            accessControl = control
            return
        case QueryKey.access:
            guard case .access(let object) = value else { throw .param("kSecAttrAccess is not a SecAccess") }
            guard operation == .add else { throw .param("kSecAttrAccess is only for SecItemAdd") }
            access = object.access
            return
        case AttributeName.tombstone.code:
            guard let flag = value.looseBoolean else { throw .param("kSecAttrTombstone is not a boolean") }
            tombstone = flag
            return
        case AttributeName.synchronizable.code:
            if case .string(QueryKey.synchronizableAny) = value { matchAnySynchronizable = true; return }
            guard let flag = value.looseBoolean ?? (value.attributeValue(for: .number).flatMap { v -> Bool? in
                if case .number(let n) = v, n == 0 || n == 1 { return n == 1 } else { return nil }
            }) else { throw .param("kSecAttrSynchronizable is not a boolean") }
            attributes[.synchronizable] = .number(flag ? 1 : 0)
            return
        default:
            break
        }
        if itemClass == .internetPassword, QueryKey.internetExtraData.contains(key) {
            throw SecStatusError(errSecMissingEntitlement, "internet passwords' extra data fields need a private entitlement")
        }
        // An identity takes any certificate attribute, then any key attribute (`SecDbAttrWithKey` in `SecItemDb.c`).
        if isIdentity, itemClass.schema[key] == nil, let attribute = ItemClass.key.schema[key] {
            guard let converted = value.attributeValue(for: attribute.kind) else {
                throw .param("attribute \(key) has a value of the wrong type")
            }
            keyAttributes[key] = converted
            return
        }
        guard let attribute = itemClass.schema[key], !SecretServiceAttributes.privateNames.contains(key) else {
            throw SecStatusError(errSecNoSuchAttr, "the item class has no attribute \(key)")
        }
        guard let converted = value.attributeValue(for: attribute.kind) else {
            throw .param("attribute \(key) has a value of the wrong type")
        }
        attributes[key] = converted
    }

    private mutating func readMatch(_ key: String, _ value: IncomingValue) throws(SecStatusError) {
        if key == QueryKey.matchSearchList {
            // Chooses keychains rather than items, so Update and Delete accept it (as macOS does).
            guard case .array(let elements) = value else { throw .param("kSecMatchSearchList is not an array of keychains") }
            var keychains: [SecKeychain] = []
            for element in elements {
                guard let keychain = element as? SecKeychain else { throw .param("kSecMatchSearchList holds something that is not a keychain") }
                keychains.append(keychain)
            }
            searchList = keychains
            return
        }
        matchKeys.insert(key)
        switch key {
        case QueryKey.matchLimit:
            switch value {
            case .string(QueryKey.matchLimitOne): limit = .one
            case .string(QueryKey.matchLimitAll): limit = .all
            case .number(let n, false) where n == -1: limit = .all
            case .number(let n, false) where n >= 0 && n <= Int64(Int32.max): limit = n == 1 ? .one : .count(Int(n))
            default: throw .param("kSecMatchLimit has a value that is not a limit")
            }
        case QueryKey.matchHostOrSubdomainOfHost:
            guard case .string(let host) = value else { throw .param("kSecMatchHostOrSubdomainOfHost is not a string") }
            guard itemClass == .internetPassword else {
                throw SecStatusError(errSecUnimplemented, "kSecMatchHostOrSubdomainOfHost applies to internet passwords only")
            }
            hostOrSubdomain = host
        case QueryKey.matchIssuers, QueryKey.matchPolicy:
            throw SecStatusError(errSecUnimplemented, "\(key) applies to certificates and identities only")
        default:
            break  // recorded and ignored, as Apple's data-protection keychain does (kSecMatchCaseInsensitive too)
        }
    }

    private mutating func readReturn(_ key: String, _ value: IncomingValue) throws(SecStatusError) {
        guard let flag = value.strictBoolean else { throw .param("\(key) is not a boolean") }
        switch key {
        case QueryKey.returnData: returns.data = flag
        case QueryKey.returnAttributes: returns.attributes = flag
        case QueryKey.returnRef: returns.ref = flag
        case QueryKey.returnPersistentRef: returns.persistentRef = flag
        default: throw .param("unknown return key")
        }
    }

    private mutating func readUse(_ key: String, _ value: IncomingValue, _ operation: SecItemOperation) throws(SecStatusError) {
        switch key {
        case QueryKey.useItemList: useItemList = true
        case QueryKey.useKeychain:
            guard case .keychain(let keychain) = value else { throw .param("kSecUseKeychain is not a keychain") }
            useKeychain = keychain
        case QueryKey.useTombstones:
            guard let flag = value.looseBoolean else { throw .param("kSecUseTombstones is not a boolean") }
            useTombstones = flag
        case QueryKey.useAuthenticationUI:
            switch value {
            case .string(QueryKey.useAuthenticationUISkip): authenticationUISkip = true
            case .string(QueryKey.useAuthenticationUIFail): authenticationUIFail = true
            case .string(QueryKey.useAuthenticationUIAllow): break
            default: throw .param("kSecUseAuthenticationUI has a value that is not a UI mode")
            }
        default:
            guard QueryKey.ignoredUse.contains(key) else { throw .param("unknown kSecUse key") }
        }
    }

    private mutating func readValue(_ key: String, _ value: IncomingValue) throws(SecStatusError) {
        switch key {
        case QueryKey.valueData:
            guard case .data(let data) = value else { throw .param("kSecValueData is not data") }
            valueData = data
        case QueryKey.valuePersistentRef: break  // read before the walk
        case QueryKey.valueRef: break  // read by readValueRef
        default: throw .param("unknown kSecValue key")
        }
    }
}
