import Foundation
import KeychainServices
import Testing

/// Apple's constant values, status codes and messages.
@Suite struct ConstantsTests {
    @Test("Constants have Apple's raw values (the ones wrapper tests compare)")
    func constantValues() {
        let expected: [(CFString, String)] = [
            (kSecClass, "class"), (kSecClassGenericPassword, "genp"), (kSecClassInternetPassword, "inet"),
            (kSecAttrAccessGroup, "agrp"), (kSecAttrSynchronizable, "sync"), (kSecAttrSynchronizableAny, "syna"),
            (kSecAttrAccessibleAlways, "dk"), (kSecAttrAccessibleAlwaysThisDeviceOnly, "dku"),
            (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, "akpu"), (kSecMatchLimitAll, "m_LimitAll"),
            (kSecReturnPersistentRef, "r_PersistentRef"), (kSecValuePersistentRef, "v_PersistentRef"),
            (kSecUseDataProtectionKeychain, "nleg"), (kSecAttrProtocolFTP, "ftp "), (kSecAttrProtocolHTTPS, "htps"),
            (kSecAttrAuthenticationTypeHTMLForm, "form"), (kSecAttrKeyTypeEC, "73"), (kSecAttrAccessGroupToken, "com.apple.token"),
        ]
        for (constant, value) in expected { #expect(constant as String == value) }
    }

    @Test("Constants work the ways wrapper code uses them")
    func constantUsage() {
        let key: CFString = kSecAttrAccount
        switch key {
        case kSecAttrService: Issue.record("matched the wrong constant")
        case kSecAttrAccount: break
        default: Issue.record("matched nothing")
        }
        #expect(String(kSecClass) == "class")
        let dictionary: [CFString: Any] = [kSecClass: kSecClassGenericPassword]
        #expect((dictionary as CFDictionary).count == 1)
        #expect(kCFBooleanTrue! as? Bool == true)
        #expect(kCFBooleanFalse! as? Bool == false)
        #expect(noErr == errSecSuccess)
    }

    @Test("Status codes have Apple's values")
    func statusValues() {
        #expect(errSecSuccess == 0)
        #expect(errSecUnimplemented == -4)
        #expect(errSecIO == -36)
        #expect(errSecParam == -50)
        #expect(errSecAllocate == -108)
        #expect(errSecUserCanceled == -128)
        #expect(errSecBadReq == -909)
        #expect(errSecInternalComponent == -2070)
        #expect(errSecNotAvailable == -25291)
        #expect(errSecAuthFailed == -25293)
        #expect(errSecDuplicateItem == -25299)
        #expect(errSecItemNotFound == -25300)
        #expect(errSecInteractionNotAllowed == -25308)
        #expect(errSecDecode == -26275)
        #expect(errSecInternal == -26276)
        #expect(errSecMissingEntitlement == -34018)
    }

    @Test("SecCopyErrorMessageString gives Apple's messages, and a sentence for unknown codes")
    func messages() {
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) as String? == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil) as String? == "The specified item already exists in the keychain.")
        #expect(SecCopyErrorMessageString(errSecMissingEntitlement, nil) as String? == "A required entitlement isn't present.")
        #expect(SecCopyErrorMessageString(errSecSuccess, nil) as String? == "No error.")
        #expect(SecCopyErrorMessageString(-123456, nil) as String? == "OSStatus -123456")
    }

    @Test("SecRandomCopyBytes fills the buffer with random bytes")
    func randomBytes() {
        var a = [UInt8](repeating: 0, count: 37), b = [UInt8](repeating: 0, count: 37)
        #expect(SecRandomCopyBytes(kSecRandomDefault, a.count, &a) == errSecSuccess)
        #expect(SecRandomCopyBytes(kSecRandomDefault, b.count, &b) == errSecSuccess)
        #expect(a != b)
        #expect(a != [UInt8](repeating: 0, count: 37))
        #expect(SecRandomCopyBytes(kSecRandomDefault, -1, &a) == errSecParam)
    }

    @Test("SecAccessControlCreateWithFlags validates like Apple's and returns Hashable objects")
    func accessControl() {
        let a = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)
        let b = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)
        #expect(a != nil && a == b)
        #expect(Set([a, b].compactMap { $0 }).count == 1)
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.biometryAny, .biometryCurrentSet], nil) == nil)
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.userPresence, .devicePasscode], nil) == nil)
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.userPresence, .applicationPassword], nil) != nil)
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.biometryAny, .or, .devicePasscode], nil) != nil)
        #expect(SecAccessControlCreateFlags.privateKeyUsage.rawValue == 1 << 30)
        #expect(SecAccessControlCreateFlags.applicationPassword.rawValue == 1 << 31)
    }

    @Test("SimpleKeychain's function-variable assignment compiles: the signatures are Apple's")
    func signatures() {
        let copyMatching: (CFDictionary, UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus = SecItemCopyMatching
        let addItem: (CFDictionary, UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus = SecItemAdd
        let updateItem: (CFDictionary, CFDictionary) -> OSStatus = SecItemUpdate
        let deleteItem: (CFDictionary) -> OSStatus = SecItemDelete
        _ = (copyMatching, addItem, updateItem, deleteItem)
    }
}
