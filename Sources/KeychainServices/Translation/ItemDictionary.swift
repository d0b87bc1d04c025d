import Foundation
import KeychainStore

/// Which public function a dictionary was given to; the key rules differ slightly.
enum SecItemOperation: Sendable {
    case add, copyMatching, update, delete
}

/// `kSecMatchLimit`'s meaning.
enum MatchLimit: Equatable, Sendable {
    case one
    case all
    case count(Int)

    /// A limit that asks for an array, not a single object.
    var isMultiple: Bool {
        switch self {
        case .one: return false
        case .all: return true
        case .count(let n): return n != 1
        }
    }

    var maximum: Int? {
        switch self {
        case .one: return 1
        case .all: return nil
        case .count(let n): return n
        }
    }
}

/// Which `kSecReturn*` keys were set.
struct ReturnFlags: Equatable, Sendable {
    var data = false
    var attributes = false
    var ref = false
    var persistentRef = false

    var count: Int { [data, attributes, ref, persistentRef].filter { $0 }.count }
}

/// A query or attribute dictionary, read and checked once by the key grammar of Apple's
/// `query_applier` (`SecDbQuery.c`).
struct ItemDictionary {
    var itemClass: ItemClass
    /// `kSecClassIdentity`: `itemClass` is then `.certificate`, and key attributes go to `keyAttributes`.
    var isIdentity = false
    var keyAttributes: [String: AttributeValue] = [:]
    /// Attributes by wire name, converted to their kinds. Never includes `kSecValueData`.
    var attributes: [String: AttributeValue] = [:]
    var accessControl: SecAccessControl?
    /// `kSecAttrAccess` (SecItemAdd): the programs the new item trusts.
    var access: ItemAccess?
    var tombstone: Bool?
    var matchAnySynchronizable = false
    var returns = ReturnFlags()
    var limit: MatchLimit = .one
    /// Every `kSecMatch*` key present (they make Update and Delete fail).
    var matchKeys: Set<String> = []
    var hostOrSubdomain: String?
    var valueData: Data?
    /// `kSecValueRef`: a key or certificate to add, or to find.
    var valueRef: AnyObject?
    var persistentReference: PersistentReference?
    var useItemList = false
    var useTombstones: Bool?
    var authenticationUISkip = false
    /// `kSecUseAuthenticationUIFail`: no prompt for this call.
    var authenticationUIFail = false

    /// The caller this call acts as: the process's access groups and whether it may be prompted.
    var caller: Caller {
        var caller = AccessGroupConfiguration.currentCaller()
        if authenticationUIFail { caller.interactionAllowed = false }
        caller.skipsUntrusted = authenticationUISkip
        return caller
    }
    /// `kSecUseKeychain`: where an add goes.
    var useKeychain: SecKeychain?
    /// `kSecMatchSearchList`: which keychains a query searches.
    var searchList: [SecKeychain]?

    /// Reads `dictionary`; throws the status Apple returns for the first thing wrong with it.
    init(_ dictionary: CFDictionary, for operation: SecItemOperation) throws(SecStatusError) {
        let entries = try Self.entries(of: dictionary)
        guard entries.count <= 128 else { throw .param("too many keys in the dictionary") }
        let persistentRef = try entries.first { $0.key == QueryKey.valuePersistentRef }.map { (entry) throws(SecStatusError) in
            try Self.persistentReference(entry.value)
        }
        let ref = entries.first { $0.key == QueryKey.valueRef }?.value
        let classValue = entries.first { $0.key == QueryKey.itemClass }?.value
        if case .string(QueryKey.identityClass)? = classValue.map(IncomingValue.init) {
            isIdentity = true
            itemClass = .certificate
        } else if classValue == nil, ref is SecIdentity || persistentRef?.isIdentity == true {
            isIdentity = true
            itemClass = .certificate
        } else {
            itemClass = try Self.itemClass(classValue, reference: persistentRef?.reference, valueRef: ref)
        }
        if persistentRef?.isIdentity == true && !isIdentity { throw .param("an identity's persistent reference names no \(itemClass.rawValue)") }
        persistentReference = persistentRef?.reference
        for (key, value) in entries {
            if key == QueryKey.valueRef { try readValueRef(value, operation); continue }
            try read(key, IncomingValue(value), operation)
        }
        if operation == .add && itemClass == .certificate && valueRef == nil { try completeCertificateFromData() }
        try check(for: operation)
    }

    /// The dictionary's entries with `String` keys, sorted by key; any other kind of key is
    /// errSecParam.
    ///
    /// Read with `getObjects(_:andKeys:count:)`, which walks the dictionary's storage once;
    /// iterating an `NSDictionary` with `for in` looks every key up again (on Linux, a large share
    /// of the translation's time). A dictionary's keys are distinct, and a few entries are sorted
    /// and searched faster as an array than hashed into a Swift dictionary.
    private static func entries(of dictionary: CFDictionary) throws(SecStatusError) -> [(key: String, value: Any)] {
        var keys: [Any] = [], objects: [Any] = []
        let count = dictionary.count
        keys.reserveCapacity(count)
        objects.reserveCapacity(count)
        dictionary.getObjects(&objects, andKeys: &keys, count: count)
        var entries: [(key: String, value: Any)] = []
        entries.reserveCapacity(keys.count)
        for (key, value) in zip(keys, objects) {
            guard let name = key as? String else { throw .param("a dictionary key is not a string") }
            entries.append((name, value))
        }
        entries.sort { $0.key < $1.key }
        return entries
    }

    private static func itemClass(_ value: Any?, reference: PersistentReference?, valueRef: Any?) throws(SecStatusError) -> ItemClass {
        guard let value else {
            if valueRef is SecKey { return .key }  // Apple takes the class from the ref
            if valueRef is SecCertificate { return .certificate }
            guard let reference else { throw .param("kSecClass is missing") }
            return reference.itemClass
        }
        guard case .string(let name) = IncomingValue(value) else { throw .param("kSecClass is not a string") }
        if let itemClass = ItemClass(rawValue: name) { return itemClass }
        throw SecStatusError(errSecNoSuchClass, "kSecClass names no item class")
    }

    /// A persistent reference, and whether it is an identity's (class `idnt`, naming the
    /// identity's certificate).
    private static func persistentReference(_ value: Any) throws(SecStatusError) -> (reference: PersistentReference, isIdentity: Bool) {
        guard case .data(let bytes) = IncomingValue(value) else { throw .param("kSecValuePersistentRef is not a persistent reference") }
        let certificate = IdentityItems.certificateReference(bytes)
        guard let reference = PersistentReference(certificate ?? bytes) else {
            throw .param("kSecValuePersistentRef is not a persistent reference")
        }
        return (reference, certificate != nil)
    }
}
