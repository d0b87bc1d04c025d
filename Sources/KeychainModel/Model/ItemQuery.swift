import FoundationEssentials

/// Which items an operation applies to.
package struct ItemQuery: Sendable {
    package var itemClass: ItemClass
    /// Exact-match criteria by wire name, already converted to each attribute's kind.
    package var criteria: [String: AttributeValue] = [:]
    /// Match synchronizable and local items alike (`kSecAttrSynchronizableAny`). Without it and
    /// without `sync` in `criteria`, only local items match (Apple's implicit `sync = 0`).
    package var matchAnySynchronizable = false
    /// nil: live items only (Apple's implicit `tomb = 0`); otherwise exactly that tombstone state.
    package var tombstone: Bool?
    package var persistentReference: PersistentReference?
    /// The most items to return; nil for all.
    package var limit: Int? = 1
    /// `kSecMatchHostOrSubdomainOfHost`: the server is this host or a subdomain of it.
    package var hostOrSubdomain: String?
    /// Generic passwords only: Secret Service lookup attributes every match carries
    /// (``SecretServiceAttributes``). Used in the agent's process by its Secret Service provider;
    /// not part of the agent protocol.
    package var secretAttributes: [String: String] = [:]

    package init(itemClass: ItemClass) { self.itemClass = itemClass }

    /// The one item `reference` names, synchronizable or not.
    package static func single(_ reference: PersistentReference) -> ItemQuery {
        var query = ItemQuery(itemClass: reference.itemClass)
        query.persistentReference = reference
        query.matchAnySynchronizable = true
        return query
    }
}

/// Who is calling: the access groups the caller may use, first = default for adds.
package struct Caller: Sendable, Hashable {
    package let accessGroups: [String]
    /// Whether the agent may ask the user (a prompt) for what the caller is not trusted with:
    /// false after `SecKeychainSetUserInteractionAllowed(false)` or with
    /// `kSecUseAuthenticationUIFail`.
    package var interactionAllowed: Bool
    /// `kSecUseAuthenticationUISkip`: items the caller is not trusted with are left out of a
    /// search's results instead of prompting.
    package var skipsUntrusted = false
    /// How long, in seconds, one entry of the keychain password for an item with a user-presence
    /// access control serves this process's later uses (LAContext's reuse duration; 0: each use).
    package var presenceReuse: UInt32 = 0

    package init(accessGroups: [String], interactionAllowed: Bool = true) {
        self.accessGroups = accessGroups
        self.interactionAllowed = interactionAllowed
    }

    /// Apple's token group is read-only.
    package static let tokenGroup = "com.apple.token"

    /// In a request to the agent, the program's own application group (its name needs a digest
    /// of the program's path, which a client without crypto does not compute).
    package static let applicationGroupMarker = "@application"

    /// `*` in the list turns off access-group filtering (Apple's system daemons).
    package var isUnrestricted: Bool { accessGroups.contains("*") }
    package var writableGroups: [String] { accessGroups.filter { $0 != Self.tokenGroup } }
}

/// A new item for ``KeychainDatabase/add(_:caller:)``.
package struct NewItem: Sendable {
    package var itemClass: ItemClass
    package var attributes: [String: AttributeValue]
    package var secret: Data?
    package var accessControlFlags: UInt64?
    /// Its access object; nil: every application may use it (a synced copy).
    package var access: ItemAccess?

    package init(itemClass: ItemClass, attributes: [String: AttributeValue], secret: Data?, accessControlFlags: UInt64? = nil,
                 access: ItemAccess? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.accessControlFlags = accessControlFlags
        self.access = access
    }
}

/// What ``KeychainDatabase/update(_:with:caller:)`` changes.
package struct ItemChanges: Sendable {
    package var attributes: [String: AttributeValue] = [:]
    /// The new secret, if it changes.
    package var secret: Data?
    /// A new access control (its flags), if it changes.
    package var accessControlFlags: UInt64?
    /// A new access object, if it changes (`SecKeychainItemSetAccess`, Always Allow).
    package var access: ItemAccess?
    /// A synced copy of another device's version (the sync engine's writes, never a client's):
    /// the change date is the version's own `mdat`, not the time of the write here.
    package var isReplica = false

    package init() {}
}

/// An item read from the keychain.
package struct StoredItem: Sendable {
    package let itemClass: ItemClass
    package let rowID: Int64
    package let persistentReference: PersistentReference
    package let isTombstone: Bool
    /// Every stored attribute, by wire name.
    package var attributes: [String: AttributeValue]
    package let accessControlFlags: UInt64?
    /// The secret, when it was asked for and the item has one.
    package var secret: Data?
    /// Its access object; nil: every application may use it.
    package var access: ItemAccess?

    package init(itemClass: ItemClass, rowID: Int64, persistentReference: PersistentReference, isTombstone: Bool,
                 attributes: [String: AttributeValue], accessControlFlags: UInt64?, secret: Data?, access: ItemAccess? = nil) {
        self.itemClass = itemClass
        self.rowID = rowID
        self.persistentReference = persistentReference
        self.isTombstone = isTombstone
        self.attributes = attributes
        self.accessControlFlags = accessControlFlags
        self.secret = secret
        self.access = access
    }
}

extension StoredItem: CustomStringConvertible {
    /// Names only: never attribute values or the secret.
    package var description: String {
        "StoredItem(\(itemClass.rawValue), row \(rowID), attributes: \(attributes.keys.sorted()), secret: \(secret == nil ? "no" : "yes"))"
    }
}
