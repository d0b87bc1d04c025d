import Crypto
import FoundationEssentials

/// The keys of one accessibility class in memory: the class key and what derives from it.
///
/// Kept in locked, dump-excluded memory that is zeroed when they are dropped (``LockedKey``); each
/// use gets a short-lived `SymmetricKey`, which swift-crypto zeroes when it is freed. Neither type
/// prints them. Dropping a `ClassKeys` (locking) frees them.
package struct ClassKeys: Sendable {
    private let stored: LockedKey
    private let storedMetadata: LockedKey
    private let storedSecretWrapping: LockedKey

    /// The class key itself (needed to re-wrap it when the password changes).
    var classKey: SymmetricKey { stored.key }
    /// Encrypts item metadata blobs of the class.
    var metadata: SymmetricKey { storedMetadata.key }
    /// Wraps per-item secret keys of the class.
    var secretWrapping: SymmetricKey { storedSecretWrapping.key }

    init(classKey: SymmetricKey) {
        stored = LockedKey(classKey)
        storedMetadata = LockedKey(KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/metadata"))
        storedSecretWrapping = LockedKey(KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/secret-wrapping"))
    }

    /// Whether two are the keys of the same class key (constant time).
    func isSame(as other: ClassKeys) -> Bool { stored.isSame(as: other.stored) }
}

/// Every key of one open keychain that is in memory now.
package struct UnlockedKeys: Sendable {
    /// The key of the search columns' keyed hashes; nil only on a machine whose device key does
    /// not open the keychain, until its password does. In locked memory (``LockedKey``).
    var index: SymmetricKey? {
        get { storedIndex?.key }
        set {
            storedIndex = newValue.map(LockedKey.init)
            indexHasher = newValue.map(IndexHasher.init(key:))
        }
    }
    private var storedIndex: LockedKey?
    /// The keyed hash of the search columns under `index`.
    private(set) var indexHasher: IndexHasher?
    /// Class keys in memory; a class that is absent is locked (or, for `akpu`, does not exist).
    var classes: [KeyClass: ClassKeys]
    /// Whether the keychain has a password (without one, `akpu` items cannot exist).
    var hasPassword: Bool
    /// Classes whose keybag rows are damaged: their items are `.decode`, the others work.
    var damaged: Set<KeyClass> = []

    init(_ keys: [String: SymmetricKey], hasPassword: Bool) {
        storedIndex = keys[Keybag.indexKeyName].map(LockedKey.init)
        indexHasher = keys[Keybag.indexKeyName].map(IndexHasher.init(key:))
        classes = [:]
        self.hasPassword = hasPassword
        insertClassKeys(keys)
    }

    init(_ opened: Keybag.Opened, hasPassword: Bool) {
        self.init(opened.keys, hasPassword: hasPassword)
        damaged = opened.damaged
    }

    /// Adds the class keys among `keys` (by keybag name), as an unlock does.
    mutating func insertClassKeys(_ keys: [String: SymmetricKey]) {
        for (name, key) in keys { if let keyClass = KeyClass(rawValue: name) { classes[keyClass] = ClassKeys(classKey: key) } }
    }

    /// Adds the class keys an unlock opened, and the damaged ones it found.
    mutating func insertClassKeys(_ opened: Keybag.Opened) {
        insertClassKeys(opened.keys)
        damaged.formUnion(opened.damaged)
    }

    func keys(for keyClass: KeyClass) throws(StoreError) -> ClassKeys {
        if damaged.contains(keyClass) {
            throw StoreError(.decode, "the keybag's key for the \(keyClass.rawValue) class is damaged; its items cannot be read")
        }
        guard let keys = classes[keyClass] else {
            if keyClass.requiresPassword && !hasPassword {
                throw StoreError(.notAvailable, "items that need a passcode cannot exist in a keychain without a password")
            }
            throw StoreError(.interactionNotAllowed, "the keychain is locked for this accessibility class", reason: .keychainLocked)
        }
        return keys
    }

    func indexKey() throws(StoreError) -> SymmetricKey {
        guard let index else { throw StoreError(.interactionNotAllowed, "the keychain is locked", reason: .keychainLocked) }
        return index
    }

    func hasher() throws(StoreError) -> IndexHasher {
        guard let indexHasher else { throw StoreError(.interactionNotAllowed, "the keychain is locked", reason: .keychainLocked) }
        return indexHasher
    }

    /// Every key by its keybag name, for re-wrapping.
    var all: [String: SymmetricKey] {
        var keys = [String: SymmetricKey]()
        if let index { keys[Keybag.indexKeyName] = index }
        for (keyClass, classKeys) in classes { keys[keyClass.rawValue] = classKeys.classKey }
        return keys
    }
}

extension UnlockedKeys: CustomStringConvertible {
    package var description: String { "UnlockedKeys(classes: \(classes.keys.map(\.rawValue).sorted()))" }
}
