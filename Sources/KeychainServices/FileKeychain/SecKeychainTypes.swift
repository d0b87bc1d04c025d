import Foundation

/// A four-character code, as Carbon spells its type tags.
public typealias FourCharCode = UInt32
public typealias OSType = FourCharCode
/// The tag of a keychain item attribute (``SecItemAttr`` raw values).
public typealias SecKeychainAttrType = OSType
/// The bits of `SecKeychainGetStatus`.
public typealias SecKeychainStatus = UInt32

/// The keychain is unlocked.
public let kSecUnlockStateStatus: SecKeychainStatus = 1
/// The keychain can be read.
public let kSecReadPermStatus: SecKeychainStatus = 2
/// The keychain can be written.
public let kSecWritePermStatus: SecKeychainStatus = 4

/// The version of ``SecKeychainSettings`` this API reads and writes.
public let SEC_KEYCHAIN_SETTINGS_VERS1: UInt32 = 1

/// A keychain file (macOS's file-based keychain API).
///
/// A reference to a path: it exists before the file does (`SecKeychainOpen` never fails for a
/// missing file; using the reference does, with `errSecNoSuchKeychain`). Two references to the
/// same path are equal.
public final class SecKeychain: Hashable, Sendable, CustomStringConvertible {
    /// The keychain file's absolute path.
    let path: String

    init(path: String) { self.path = path }

    public static func == (lhs: SecKeychain, rhs: SecKeychain) -> Bool { lhs.path == rhs.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }
    public var description: String { "<SecKeychain \(path)>" }
}

/// An item in a keychain file, as `SecKeychainFind...Password` and `SecKeychainAdd...Password`
/// return it.
public final class SecKeychainItem: Hashable, Sendable {
    let keychainPath: String
    /// The item's persistent reference in its keychain.
    let reference: Data

    init(keychainPath: String, reference: Data) {
        self.keychainPath = keychainPath
        self.reference = reference
    }

    public static func == (lhs: SecKeychainItem, rhs: SecKeychainItem) -> Bool {
        lhs.keychainPath == rhs.keychainPath && lhs.reference == rhs.reference
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keychainPath)
        hasher.combine(reference)
    }
}

public typealias SecKeychainRef = SecKeychain
public typealias SecKeychainItemRef = SecKeychainItem
public typealias SecAccessRef = SecAccess

/// A keychain's lock settings.
public struct SecKeychainSettings: Sendable, Equatable {
    /// Set to `SEC_KEYCHAIN_SETTINGS_VERS1`.
    public var version: UInt32
    /// Recorded and returned; Linux gives the library no sleep notification.
    public var lockOnSleep: DarwinBoolean
    /// Lock after `lockInterval` seconds without a call.
    public var useLockInterval: DarwinBoolean
    public var lockInterval: UInt32

    public init() {
        self.init(version: SEC_KEYCHAIN_SETTINGS_VERS1, lockOnSleep: false, useLockInterval: false, lockInterval: 0)
    }

    public init(version: UInt32, lockOnSleep: DarwinBoolean, useLockInterval: DarwinBoolean, lockInterval: UInt32) {
        self.version = version
        self.lockOnSleep = lockOnSleep
        self.useLockInterval = useLockInterval
        self.lockInterval = lockInterval
    }
}

/// One attribute of a keychain item: a tag and a buffer.
public struct SecKeychainAttribute {
    public var tag: SecKeychainAttrType
    public var length: UInt32
    public var data: UnsafeMutableRawPointer?

    public init() { self.init(tag: 0, length: 0, data: nil) }
    public init(tag: SecKeychainAttrType, length: UInt32, data: UnsafeMutableRawPointer?) {
        self.tag = tag
        self.length = length
        self.data = data
    }
}

/// A list of attributes.
public struct SecKeychainAttributeList {
    public var count: UInt32
    public var attr: UnsafeMutablePointer<SecKeychainAttribute>?

    public init() { self.init(count: 0, attr: nil) }
    public init(count: UInt32, attr: UnsafeMutablePointer<SecKeychainAttribute>?) {
        self.count = count
        self.attr = attr
    }
}
