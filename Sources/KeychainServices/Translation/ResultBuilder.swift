import Foundation
import KeychainStore

/// Shapes items into what the caller asked for (`handle_result` in `SecItemDb.c`, then `SecItem.m`).
///
/// One return key gives `Data` (secret or persistent reference) or an attribute dictionary;
/// several give a dictionary; a multi-item limit gives an array. Dictionary keys are Swift
/// `String`s so that both `[String: Any]` and `[AnyHashable: Any]` look-ups work on Linux.
struct ResultBuilder {
    let returns: ReturnFlags
    /// Add returns only Apple's "A" attributes, without `tomb` and `musr`.
    let forAdd: Bool

    /// The element for one item, or nil where Apple produces none (data asked for, none stored;
    /// a ref asked for on a password class).
    func element(for item: StoredItem, in keychain: any KeychainBackend) -> Any? {
        // A key that is not extractable never gives out its material, whatever is asked.
        let secret = KeyItemAttributes.isExtractable(item) ? item.secret : nil
        if returns.count == 1 && !returns.attributes {
            if returns.data { return secret.map { NSData(data: $0) } }
            if returns.persistentRef { return NSData(data: item.persistentReference.bytes) }
            return ref(for: item, in: keychain)  // password items have no ref object (iOS): nil
        }
        var dictionary: [String: Any] = [:]
        if returns.attributes { dictionary = attributes(of: item) }
        if returns.data, let secret { dictionary[QueryKey.valueData] = secret }
        if returns.persistentRef { dictionary[QueryKey.valuePersistentRef] = item.persistentReference.bytes }
        if returns.ref {
            if let ref = ref(for: item, in: keychain) { dictionary[QueryKey.valueRef] = ref } else { dictionary[QueryKey.itemClass] = item.itemClass.rawValue }
        }
        return NSDictionary(dictionary: dictionary)
    }

    /// The object `kSecReturnRef` gives for an item: a `SecKey` for a key.
    private func ref(for item: StoredItem, in keychain: any KeychainBackend) -> AnyObject? {
        switch item.itemClass {
        case .key: return KeyItemAttributes.key(from: item, in: keychain)
        case .certificate: return CertificateItemAttributes.certificate(from: item)
        default: return nil
        }
    }

    /// The item's attributes as Apple returns them.
    func attributes(of item: StoredItem) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for (name, value) in item.attributes where !SecretServiceAttributes.privateNames.contains(name) {
            dictionary[name] = Self.bridge(value)
        }
        if let protection = item.attributes[.accessible]?.utf8String {
            let flags = SecAccessControlCreateFlags(rawValue: CFOptionFlags(item.accessControlFlags ?? 0))
            dictionary[.accessControl] = SecAccessControl(protection: protection, flags: flags)
        }
        if !forAdd {
            dictionary[.tombstone] = NSNumber(value: item.isTombstone ? 1 : 0)
            dictionary[.multiUser] = Data()
        }
        return dictionary
    }

    /// The element for one identity: the key's attributes with the certificate's over them, and
    /// `certdata` (the certificate's DER); its data is the key's; its ref a `SecIdentity`; its
    /// persistent reference the identity class's with the certificate's row (Apple's
    /// `s3dl_query_row` merges and names it so).
    func element(for identity: IdentityItems.Found) -> Any? {
        let secret = KeyItemAttributes.isExtractable(identity.key) ? identity.key.secret : nil
        if returns.count == 1 && !returns.attributes {
            if returns.data { return secret.map { NSData(data: $0) } }
            if returns.persistentRef { return NSData(data: IdentityItems.reference(certificate: identity.certificate.persistentReference.bytes)) }
            return IdentityItems.identity(identity)
        }
        var dictionary: [String: Any] = [:]
        if returns.attributes {
            dictionary = attributes(of: identity.key)
            dictionary.merge(attributes(of: identity.certificate)) { $1 }
            dictionary["certdata"] = identity.certificate.secret
        }
        if returns.data, let secret { dictionary[QueryKey.valueData] = secret }
        if returns.persistentRef { dictionary[QueryKey.valuePersistentRef] = IdentityItems.reference(certificate: identity.certificate.persistentReference.bytes) }
        if returns.ref, let ref = IdentityItems.identity(identity) { dictionary[QueryKey.valueRef] = ref }
        return NSDictionary(dictionary: dictionary)
    }

    func result(for identities: [IdentityItems.Found], limit: MatchLimit) -> AnyObject? {
        if limit.isMultiple {
            return NSArray(array: returns.count == 0 ? [] : identities.compactMap { element(for: $0) })
        }
        guard let first = identities.first, returns.count > 0 else { return nil }
        return element(for: first) as AnyObject?
    }

    static func bridge(_ value: AttributeValue) -> Any {
        switch value {
        case .string(let s): return s
        case .data(let d): return d
        case .number(let n): return NSNumber(value: n)
        case .date(let d): return d
        }
    }

    /// The whole result: one element, or an array for a multi-item limit. Nil: leave `*result`.
    func result(for items: [(keychain: any KeychainBackend, item: StoredItem)], limit: MatchLimit) -> AnyObject? {
        if limit.isMultiple {
            return NSArray(array: returns.count == 0 ? [] : items.compactMap { element(for: $0.item, in: $0.keychain) })
        }
        guard let first = items.first, returns.count > 0 else { return nil }
        return element(for: first.item, in: first.keychain) as AnyObject?
    }
}
