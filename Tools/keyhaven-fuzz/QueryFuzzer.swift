import Foundation
import KeychainServices

/// Turns fuzz bytes into SecItem calls: the first byte picks the call, the rest becomes one or
/// two dictionaries of keys from Apple's constants (and arbitrary text) with values of every
/// kind a caller might pass.
enum QueryFuzzer {
    static let keys: [String] = [
        kSecClass, kSecAttrAccount, kSecAttrService, kSecAttrServer, kSecAttrPort, kSecAttrProtocol, kSecAttrPath,
        kSecAttrSecurityDomain, kSecAttrAuthenticationType, kSecValueData, kSecValueRef, kSecValuePersistentRef,
        kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecMatchLimit, kSecAttrAccessible,
        kSecAttrAccessGroup, kSecAttrSynchronizable, kSecAttrLabel, kSecAttrComment, kSecAttrDescription,
        kSecAttrGeneric, kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrCreationDate,
        kSecAttrModificationDate, kSecAttrAccessControl, kSecUseDataProtectionKeychain, kSecMatchHostOrSubdomainOfHost,
        kSecMatchSearchList, kSecMatchCaseInsensitive, kSecUseKeychain, kSecAttrTokenID, kSecUseAuthenticationUI,
    ].map { $0 as String }

    nonisolated(unsafe) static let constants: [Any] = [  // immutable; CF constants are not Sendable
        kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecMatchLimitAll, kSecMatchLimitOne,
        kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
        kSecAttrSynchronizableAny, kSecAttrProtocolHTTPS, kSecAttrAuthenticationTypeDefault, kCFBooleanTrue as Any,
    ]

    /// Reads fuzz bytes in order; past the end everything is zero.
    struct Bytes {
        let bytes: [UInt8]
        var offset = 0
        var atEnd: Bool { offset >= bytes.count }
        mutating func next() -> UInt8 {
            defer { offset += 1 }
            return offset < bytes.count ? bytes[offset] : 0
        }
        mutating func take(_ count: Int) -> [UInt8] {
            let end = min(bytes.count, offset + count)
            defer { offset = max(offset, end) }
            return offset < end ? Array(bytes[offset..<end]) : []
        }
    }

    static func value(_ input: inout Bytes) -> Any {
        switch input.next() % 10 {
        case 0: return String(decoding: input.take(Int(input.next() % 24)), as: UTF8.self)
        case 1: return Data(input.take(Int(input.next() % 40)))
        case 2: return NSNumber(value: Int64(bitPattern: UInt64(input.next()) &* 0x0101_0101_0101_0101) >> Int64(input.next() % 64))
        case 3: return input.next() % 2 == 0
        case 4: return Date(timeIntervalSinceReferenceDate: Double(Int8(bitPattern: input.next())) * 1e7)
        case 5: return constants[Int(input.next()) % constants.count]
        case 6: return NSNull()
        case 7: return (0..<Int(input.next() % 3)).map { _ in String(decoding: input.take(4), as: UTF8.self) }
        case 8: return NSNumber(value: Double(Int8(bitPattern: input.next())) / 3)
        default: return keys[Int(input.next()) % keys.count]
        }
    }

    static func dictionary(_ input: inout Bytes) -> NSDictionary {
        let dictionary = NSMutableDictionary()
        for _ in 0..<Int(input.next() % 12) where !input.atEnd {
            let selector = input.next()
            let key = selector < 240 ? keys[Int(selector) % keys.count] : String(decoding: input.take(6), as: UTF8.self)
            dictionary[key] = value(&input)
        }
        return dictionary
    }

    /// The keychain is the caller's temporary `KEYHAVEN_HOME` (scripts/fuzz.sh and the replay
    /// test make one and remove it); without one this target refuses to run, so it never
    /// writes to a real keychain or leaves a folder behind.
    static let setUp: Void = {
        guard let home = ProcessInfo.processInfo.environment["KEYHAVEN_HOME"], !home.isEmpty else {
            FileHandle.standardError.write(Data("the query target needs KEYHAVEN_HOME set to a temporary folder\n".utf8))
            exit(2)
        }
        setenv("KEYHAVEN_AGENT", "off", 1)
    }()

    static func run(_ bytes: [UInt8]) {
        _ = setUp
        var input = Bytes(bytes: bytes)
        let operation = input.next() % 4
        let first = dictionary(&input)
        var result: CFTypeRef?
        switch operation {
        case 0: _ = SecItemAdd(first, &result)
        case 1: _ = SecItemCopyMatching(first, &result)
        case 2: _ = SecItemUpdate(first, dictionary(&input))
        default: _ = SecItemDelete(first)
        }
    }
}
