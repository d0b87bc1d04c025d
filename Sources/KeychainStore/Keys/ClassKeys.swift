import Crypto
import FoundationEssentials

/// The keys of one accessibility class in memory: the class key and what derives from it.
///
/// `SymmetricKey` keeps its bytes in storage that swift-crypto zeroes when it is freed, and
/// neither type prints them. Dropping a `ClassKeys` (locking) frees them.
package struct ClassKeys: Sendable {
    /// The class key itself (needed to re-wrap it when the password changes).
    let classKey: SymmetricKey
    /// Encrypts item metadata blobs of the class.
    let metadata: SymmetricKey
    /// Wraps per-item secret keys of the class.
    let secretWrapping: SymmetricKey

    init(classKey: SymmetricKey) {
        self.classKey = classKey
        metadata = KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/metadata")
        secretWrapping = KeychainCrypto.derive(classKey, purpose: "keyhaven/v1/class/secret-wrapping")
    }
}

/// Every key of one open keychain that is in memory now.
package struct UnlockedKeys: Sendable {
    /// The key of the search columns' keyed hashes; nil only on a machine whose device key does
    /// not open the keychain, until its password does.
    var index: SymmetricKey? { didSet { indexHasher = index.map(IndexHasher.init(key:)) } }
    /// The keyed hash of the search columns under `index`.
    private(set) var indexHasher: IndexHasher?
    /// Class keys in memory; a class that is absent is locked (or, for `akpu`, does not exist).
    var classes: [KeyClass: ClassKeys]
    /// Whether the keychain has a password (without one, `akpu` items cannot exist).
    var hasPassword: Bool
    /// Classes whose keybag rows are damaged: their items are `.decode`, the others work.
    var damaged: Set<KeyClass> = []

    init(_ keys: [String: SymmetricKey], hasPassword: Bool) {
        index = keys[Keybag.indexKeyName]
        indexHasher = index.map(IndexHasher.init(key:))
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
            throw StoreError(.interactionNotAllowed, "the keychain is locked for this accessibility class")
        }
        return keys
    }

    func indexKey() throws(StoreError) -> SymmetricKey {
        guard let index else { throw StoreError(.interactionNotAllowed, "the keychain is locked") }
        return index
    }

    func hasher() throws(StoreError) -> IndexHasher {
        guard let indexHasher else { throw StoreError(.interactionNotAllowed, "the keychain is locked") }
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
