import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// `org.freedesktop.Secret.Collection` (a keychain) and `org.freedesktop.Secret.Item`.
extension SecretService {
    static let labelProperty = "org.freedesktop.Secret.Item.Label"
    static let attributesProperty = "org.freedesktop.Secret.Item.Attributes"
    static let typeProperty = "org.freedesktop.Secret.Item.Type"

    func collectionMethod(_ method: Method, keychain: String, path: String) throws(BusError) -> ([BusValue], Bool) {
        let a = method.arguments
        let i = SecretServiceNames.collectionInterface
        let collection = SecretObject.collectionPath(for: keychain)
        if try method.is(i, "SearchItems", "a{ss}") {
            let wanted = try a[0].searchAttributes()
            if isLocked(keychain) { return ([.paths(lockedItemPaths(in: keychain, collection: collection, matching: wanted))], false) }
            let found = try items(in: keychain, matching: wanted, try context(method.call))
            return ([.paths(found.compactMap { SecretObject.itemPath(collection: collection, reference: $0.persistentReference) })], false)
        }
        if try method.is(i, "CreateItem", "a{sv}(oayays)b") {
            return (try createItem(method.call, keychain: keychain, collection: collection, properties: a[0].propertiesValue ?? [:],
                                   secret: a[1], replace: a[2].boolValue ?? false), false)
        }
        if try method.is(i, "Delete", "") {
            guard keychain != agent.home.defaultKeychainPath, keychain != SecretObject.defaultKeychain(of: agent.home) else {
                throw .notSupported("the default keychain is not deleted through the Secret Service (keyhaven delete-keychain)")
            }
            guard !SecretObject.isSession(keychain) else {
                throw .notSupported("the session collection lasts as long as the agent: delete its items instead")
            }
            _ = try context(method.call)
            if let error = agent.respond(to: .deleteKeychain(keychain: keychain)).error { throw BusError(error) }
            emit(SecretObject.root, SecretServiceNames.serviceInterface, "CollectionDeleted", [.objectPath(collection)])
            return ([.objectPath("/")], false)
        }
        throw method.unknown
    }

    private func createItem(_ call: BusCall, keychain: String, collection: String, properties: [String: BusValue],
                            secret: BusValue, replace: Bool) throws(BusError) -> [BusValue] {
        let context = try context(call)
        guard !isLocked(keychain) else { throw .isLocked("the collection") }
        let secretPath: String
        if case .structure(let fields) = secret, let first = fields.first?.stringValue { secretPath = first } else { secretPath = "" }
        let (value, contentType) = try session(secretPath, for: call).decode(secret)
        var attributes: [String: String]
        if let given = properties[Self.attributesProperty] {
            guard let dictionary = given.stringDictionaryValue else { throw .invalidArguments("\(Self.attributesProperty) is an a{ss}") }
            attributes = dictionary
        } else {
            attributes = [:]
        }
        // The spec's other properties: `Type` is the schema, kept as libsecret keeps it (the
        // attribute `xdg:schema`); `Locked`, `Created` and `Modified` are the service's to say.
        if let type = properties[Self.typeProperty] {
            guard case .string(let schema) = type else { throw .invalidArguments("\(Self.typeProperty) is a string") }
            if !schema.isEmpty, attributes["xdg:schema"] == nil { attributes["xdg:schema"] = schema }
        }
        let label: String?
        switch properties[Self.labelProperty] {
        case nil: label = nil
        case .string(let given)?: label = given
        default: throw .invalidArguments("\(Self.labelProperty) is a string")
        }
        let lookup = SecretServiceAttributes(attributes: attributes, contentType: contentType)
        do { try lookup.validate() } catch { throw .invalidArguments(error.message) }
        let keychainAttributes = SecretItemMapping.keychainAttributes(lookup, label: label ?? "")

        // `replace`: the item with exactly these attributes takes the new secret and label.
        if replace, let existing = try items(in: keychain, matching: attributes, context)
            .first(where: { Self.lookupAttributes($0) == attributes }) {
            var changes = ItemChanges()
            changes.attributes = keychainAttributes
            changes.secret = value
            try change(existing.persistentReference, in: keychain, changes, context, path: collection)
            let path = SecretObject.itemPath(collection: collection, reference: existing.persistentReference) ?? "/"
            emit(collection, SecretServiceNames.collectionInterface, "ItemChanged", [.objectPath(path)])
            return [.objectPath(path), .objectPath("/")]
        }
        // Otherwise a new item, as the spec has it, even beside one with the same attributes: it
        // takes a discriminator when its service and account are another item's.
        var item = NewItem(itemClass: .genericPassword, attributes: keychainAttributes, secret: value)
        var added = try respond(.add(keychain: keychain, item: item, caller: Self.caller), context)
        if added.error?.code == .duplicateItem {
            item.attributes[SecretServiceAttributes.discriminatorName] = Self.newDiscriminator()
            added = try respond(.add(keychain: keychain, item: item, caller: Self.caller), context)
        }
        if let error = added.error { throw BusError(error) }
        guard case .answer(.item(let stored)) = added, let path = SecretObject.itemPath(collection: collection, reference: stored.persistentReference) else {
            throw .failed("the new item has no identity")
        }
        emit(collection, SecretServiceNames.collectionInterface, "ItemCreated", [.objectPath(path)])
        return [.objectPath(path), .objectPath("/")]
    }

    /// A Secret Service item's discriminator: 128 random bits, as hex.
    static func newDiscriminator() -> AttributeValue { .string(KeychainCrypto.randomBytes(16).hexString) }

    func itemMethod(_ method: Method, keychain: String, collection: String, reference: PersistentReference,
                    path: String) throws(BusError) -> ([BusValue], Bool) {
        let i = SecretServiceNames.itemInterface
        let context = try context(method.call)
        if try method.is(i, "GetSecret", "o") {
            let session = try session(method.arguments[0].stringValue ?? "", for: method.call)
            guard !isLocked(keychain) else { throw .isLocked("the item") }
            let item = try item(reference, in: keychain, withSecret: true, context, path: path)
            return ([try session.encode(item.secret ?? Data(), contentType: Self.contentType(item))], true)
        }
        if try method.is(i, "SetSecret", "(oayays)") {
            let secret = method.arguments[0]
            guard case .structure(let fields) = secret, let sessionPath = fields.first?.stringValue else {
                throw .invalidArguments("the secret is a (oayays)")
            }
            let (value, contentType) = try session(sessionPath, for: method.call).decode(secret)
            guard !isLocked(keychain) else { throw .isLocked("the item") }
            let current = try item(reference, in: keychain, withSecret: false, context, path: path)
            var changes = ItemChanges()
            changes.secret = value
            var lookup = SecretServiceAttributes(item: current.attributes) ?? SecretServiceAttributes(attributes: Self.lookupAttributes(current))
            if lookup.contentType != contentType || SecretServiceAttributes(item: current.attributes) == nil {
                lookup.contentType = contentType
                changes.attributes[SecretServiceAttributes.attributeName] = lookup.attributeValue
            }
            try change(reference, in: keychain, changes, context, path: path)
            emit(collection, SecretServiceNames.collectionInterface, "ItemChanged", [.objectPath(path)])
            return ([], false)
        }
        if try method.is(i, "Delete", "") {
            guard !isLocked(keychain) else { throw .isLocked("the item") }
            _ = try item(reference, in: keychain, withSecret: false, context, path: path)
            var query = ItemQuery(itemClass: .genericPassword)
            query.persistentReference = reference
            query.matchAnySynchronizable = true
            try perform(.delete(keychains: [keychain], query: query, caller: Self.caller, makeTombstones: false), context)
            emit(collection, SecretServiceNames.collectionInterface, "ItemDeleted", [.objectPath(path)])
            return ([.objectPath("/")], false)
        }
        throw method.unknown
    }
}
