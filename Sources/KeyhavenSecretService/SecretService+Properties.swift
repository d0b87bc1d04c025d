#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// `org.freedesktop.DBus.Properties` and `org.freedesktop.DBus.Introspectable` of every object.
extension SecretService {
    func properties(_ object: SecretObject, _ method: Method) throws(BusError) -> [BusValue] {
        let p = "org.freedesktop.DBus.Properties"
        let a = method.arguments
        if try method.is(p, "Get", "ss") {
            let all = try propertyValues(object, interface: a[0].stringValue ?? "", method.call)
            guard let value = all.first(where: { $0.0 == a[1].stringValue })?.1 else {
                throw .invalidArguments("no property \(a[1].stringValue ?? "") on \(a[0].stringValue ?? "")")
            }
            return [.variant(value)]
        }
        if try method.is(p, "GetAll", "s") {
            return [.properties(try propertyValues(object, interface: a[0].stringValue ?? "", method.call))]
        }
        if try method.is(p, "Set", "ssv") {
            guard case .variant(let value) = a[2] else { throw .invalidArguments("Set takes a variant") }
            try setProperty(object, interface: a[0].stringValue ?? "", name: a[1].stringValue ?? "", value: value, method.call)
            return []
        }
        throw method.unknown
    }

    private func propertyValues(_ object: SecretObject, interface: String, _ call: BusCall) throws(BusError) -> [(String, BusValue)] {
        switch object {
        case .service:
            guard interface.isEmpty || interface == SecretServiceNames.serviceInterface else { return [] }
            return [("Collections", .paths(keychains().map(SecretObject.collectionPath(for:))))]
        case .collection(let keychain, _):
            guard interface.isEmpty || interface == SecretServiceNames.collectionInterface else { return [] }
            let collection = SecretObject.collectionPath(for: keychain)
            let locked = isLocked(keychain)
            let items = locked ? lockedItemPaths(in: keychain, collection: collection, matching: [:])
                : try items(in: keychain, matching: [:], try context(call))
                    .compactMap { SecretObject.itemPath(collection: collection, reference: $0.persistentReference) }
            var info = stat()
            let exists = stat(keychain, &info) == 0
            let name = (try? KeychainPreferences.load(agent.home))?.label(of: keychain) ?? KeychainPreferences.fileName(keychain)
            return [("Items", .paths(items)), ("Label", .string(name)), ("Locked", .bool(locked)),
                    ("Created", .uint64(exists ? UInt64(max(0, info.st_ctim.tv_sec)) : 0)),
                    ("Modified", .uint64(exists ? UInt64(max(0, info.st_mtim.tv_sec)) : 0))]
        case .item(let keychain, _, let reference, let path):
            guard interface.isEmpty || interface == SecretServiceNames.itemInterface else { return [] }
            if isLocked(keychain) {
                // Its label, attributes and dates are encrypted with it: a locked item shows none
                // (as gnome-keyring's do), only that it is there and locked.
                guard !lockedItemPaths(in: keychain, collection: SecretObject.collectionPath(for: keychain), matching: [:],
                                       reference: reference).isEmpty else { throw .noSuchObject(path) }
                return [("Locked", .bool(true)), ("Attributes", .stringDictionary([:])), ("Label", .string("")), ("Type", .string("")),
                        ("Created", .uint64(0)), ("Modified", .uint64(0))]
            }
            let item = try item(reference, in: keychain, withSecret: false, try context(call), path: path)
            func seconds(_ name: AttributeName) -> UInt64 {
                guard case .date(let date)? = item.attributes[name] else { return 0 }
                return UInt64(max(0, date.timeIntervalSince1970))
            }
            let attributes = Self.lookupAttributes(item)
            // The item's schema, as libsecret names it in the attribute `xdg:schema`.
            return [("Locked", .bool(false)), ("Attributes", .stringDictionary(attributes)),
                    ("Label", .string(item.attributes[.label]?.utf8String ?? "")), ("Type", .string(attributes["xdg:schema"] ?? "")),
                    ("Created", .uint64(seconds(.creationDate))), ("Modified", .uint64(seconds(.modificationDate)))]
        case .session, .prompt:
            return []
        }
    }

    private func setProperty(_ object: SecretObject, interface: String, name: String, value: BusValue, _ call: BusCall) throws(BusError) {
        if case .collection(let keychain, _) = object, interface == SecretServiceNames.collectionInterface, name == "Label" {
            guard case .string(let label) = value else { throw .invalidArguments("Label is a string") }
            try setLabel(label, of: keychain, call)
            return
        }
        guard case .item(let keychain, let collection, let reference, let path) = object, interface == SecretServiceNames.itemInterface else {
            throw BusError("org.freedesktop.DBus.Error.PropertyReadOnly", "\(interface).\(name) cannot be set here")
        }
        guard !isLocked(keychain) else { throw .isLocked("the item") }
        let context = try context(call)
        var changes = ItemChanges()
        switch name {
        case "Label":
            guard let label = value.stringValue, case .string = value else { throw .invalidArguments("Label is a string") }
            changes.attributes[.label] = .string(label)
        case "Attributes":
            guard let attributes = value.stringDictionaryValue else { throw .invalidArguments("Attributes is an a{ss}") }
            let current = try item(reference, in: keychain, withSecret: false, context, path: path)
            let lookup = SecretServiceAttributes(attributes: attributes, contentType: Self.contentType(current))
            do { try lookup.validate() } catch { throw .invalidArguments(error.message) }
            changes.attributes = SecretItemMapping.keychainAttributes(lookup, label: nil)
        default:
            throw BusError("org.freedesktop.DBus.Error.PropertyReadOnly", "\(interface).\(name) cannot be set")
        }
        do {
            try change(reference, in: keychain, changes, context, path: path)
        } catch where name == "Attributes" && error.isDuplicate {
            // New attributes whose service and account another item has: this one coexists with
            // it, as a new item would (CreateItem).
            changes.attributes[SecretServiceAttributes.discriminatorName] = Self.newDiscriminator()
            try change(reference, in: keychain, changes, context, path: path)
        }
        emit(collection, SecretServiceNames.collectionInterface, "ItemChanged", [.objectPath(path)])
    }

    func introspect(_ object: SecretObject, call: BusCall) throws(BusError) -> String {
        var interfaces = [Introspection.properties, Introspection.introspectable]
        var children: [String] = []
        switch object {
        case .service:
            interfaces.append(Introspection.service)
            children = ["collection", "aliases"]
        case .collection(let keychain, _):
            interfaces.append(Introspection.collection)
            let collection = SecretObject.collectionPath(for: keychain)
            if !isLocked(keychain), call.path.hasPrefix(SecretObject.collectionPrefix) {
                children = try items(in: keychain, matching: [:], try context(call)).compactMap {
                    SecretObject.itemPath(collection: collection, reference: $0.persistentReference)?.split(separator: "/").last.map(String.init)
                }
            }
        case .item: interfaces.append(Introspection.item)
        case .session(let path):
            guard state.withLock({ $0.sessions[path] })?.owner == call.sender else { throw .unknownObject(path) }
            interfaces.append(Introspection.session)
        case .prompt(let path):
            guard state.withLock({ $0.prompts[path] })?.owner == call.sender else { throw .unknownObject(path) }
            interfaces.append(Introspection.prompt)
        }
        return Introspection.document(interfaces: interfaces, children: children)
    }

    /// A collection's `Label`: the keychain's display label, kept in the home's preferences (the
    /// file keeps its name, so every path to it stays valid); empty, or the file's name, goes back
    /// to the file's name. `PropertiesChanged` and the service's `CollectionChanged` tell clients.
    private func setLabel(_ label: String, of keychain: String, _ call: BusCall) throws(BusError) {
        _ = try context(call)
        guard label.utf8.count <= 200, !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArguments("a collection's Label is at most 200 bytes, without control characters")
        }
        let home = agent.home
        do throws(StoreError) {
            var preferences = try KeychainPreferences.load(home)
            preferences.setLabel(label, of: keychain)
            try preferences.save(home)
        } catch {
            throw BusError(error)
        }
        let path = SecretObject.collectionPath(for: keychain)
        let shown = label.isEmpty ? KeychainPreferences.fileName(keychain) : label
        emit(path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
             [.string(SecretServiceNames.collectionInterface), .properties([("Label", .string(shown))]), .array(element: "s", [])])
        emit(SecretObject.root, SecretServiceNames.serviceInterface, "CollectionChanged", [.objectPath(path)])
    }
}
