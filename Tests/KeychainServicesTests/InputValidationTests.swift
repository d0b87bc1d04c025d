import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Bad input gets Apple's status code and changes nothing (`SecDbQuery.c`'s `query_applier`, `SecItemServer.c`).
@Suite(.freshKeychain())
struct InputValidationTests {
    @Test("A missing class is errSecParam; an unknown class errSecNoSuchClass; AppleShare too")
    func classes() {
        #expect(copy([K.account: "x"]).0 == errSecParam)
        #expect(copy([K.class: "nope"]).0 == errSecNoSuchClass)
        #expect(copy([K.class: kSecClassAppleSharePassword]).0 == errSecNoSuchClass)
        #expect(copy([K.class: 42]).0 == errSecParam)
    }

    @Test("Unknown keys: 4 characters errSecNoSuchAttr, otherwise errSecParam; f-keys ignored")
    func unknownKeys() {
        #expect(add(genericPassword(["zzzz": "x"])) == errSecNoSuchAttr)
        #expect(add(genericPassword(["bogus_key": "x"])) == errSecParam)
        #expect(add(genericPassword(["r_Bogus": true])) == errSecParam)
        #expect(add(genericPassword(["u_Bogus": true])) == errSecParam)
        #expect(add(genericPassword(["v_Bogus": true])) == errSecParam)
        #expect(add(genericPassword(["x": true])) == errSecParam)
        #expect(add(genericPassword(["f_callback": true])) == errSecSuccess)
    }

    @Test("The Secret Service's own attributes (khss, khdc) are no keys of Apple's: refused on add, query and update, never returned",
          arguments: ["khss", "khdc"])
    func secretServiceAttributeIsInternal(name: String) {
        #expect(add(genericPassword([name: Data([1, 0, 0, 0, 0])])) == errSecNoSuchAttr)
        #expect(add(genericPassword([name: "d1"])) == errSecNoSuchAttr)
        #expect(copy(genericPassword([name: Data([1])])).0 == errSecNoSuchAttr)
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        #expect(SecItemUpdate(genericPassword([:]) as CFDictionary, [name: Data([1])] as CFDictionary) == errSecNoSuchAttr)
        let (status, result) = copy(genericPassword([K.returnAttributes: true]))
        #expect(status == errSecSuccess && (result as? [String: Any])?[name] == nil)
    }

    @Test("A key that is not a string is errSecParam")
    func nonStringKey() {
        let dictionary = NSMutableDictionary(dictionary: genericPassword())
        dictionary[NSNumber(value: 7)] = "x"
        #expect(SecItemAdd(dictionary, nil) == errSecParam)
    }

    @Test("Values of the wrong type are errSecParam, and nothing is stored")
    func wrongValueTypes() {
        #expect(add(genericPassword([K.account: ["an", "array"]])) == errSecParam)
        #expect(add(genericPassword([kSecAttrCreationDate as String: "yesterday"])) == errSecParam)
        #expect(add(genericPassword([kSecAttrCreator as String: Data("x")])) == errSecParam)
        #expect(add(genericPassword([K.data: "not data"])) == errSecParam)
        #expect(add(genericPassword([K.sync: "maybe"])) == errSecParam)
        #expect(add(genericPassword([K.group: 12])) == errSecParam)
        #expect(copy([K.class: kSecClassGenericPassword]).0 == errSecItemNotFound)
    }

    @Test("Return keys must be booleans: the number 1 is errSecParam")
    func returnKeysMustBeBooleans() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(copy(genericPassword([K.returnData: 1])).0 == errSecParam)
        #expect(copy(genericPassword([K.returnData: "yes"])).0 == errSecParam)
        #expect(copy(genericPassword([K.returnData: kCFBooleanTrue!])).0 == errSecSuccess)
    }

    @Test("kSecMatchLimit must be a limit; 0 finds nothing; -1 is all")
    func matchLimits() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(copy(genericPassword([K.limit: "lots"])).0 == errSecParam)
        #expect(copy(genericPassword([K.limit: -5])).0 == errSecParam)
        #expect(copy(genericPassword([K.limit: 0])).0 == errSecItemNotFound)
        #expect(copy(genericPassword([K.limit: -1, K.returnData: true])).1 is [Any])
    }

    @Test("Malformed persistent references are errSecParam; a row-id reference cannot be added")
    func malformedPersistentRefs() {
        #expect(copy([K.persistentRef: Data("short")]).0 == errSecParam)
        #expect(copy([K.persistentRef: Data("zzzz0123456789abcdef")]).0 == errSecParam)
        #expect(copy([K.persistentRef: Data("cert0123456789abcdef")]).0 == errSecItemNotFound)
        #expect(copy([K.persistentRef: "genp0123456789abcdef"]).0 == errSecParam)
        #expect(copy([K.persistentRef: Data("genp0123456789abcdef")]).0 == errSecItemNotFound)
        #expect(add(genericPassword([K.persistentRef: Data("genp") + Data(count: 8)])) == errSecParam)
    }

    @Test("A persistent ref with attributes is errSecParam in CopyMatching, allowed in Update and Delete")
    func persistentRefWithAttributes() throws {
        let ref = try #require(addReturning(genericPassword([K.returnPersistentRef: true])).1 as? Data)
        #expect(copy([K.persistentRef: ref, K.account: "alice"]).0 == errSecParam)
        #expect(update([K.persistentRef: ref, K.account: "someone else"], [K.label: "x"]) == errSecItemNotFound)
        #expect(update([K.persistentRef: ref, K.account: "alice"], [K.label: "x"]) == errSecSuccess)
        #expect(delete([K.persistentRef: ref, K.account: "alice"]) == errSecSuccess)
    }

    @Test("Update and Delete ignore kSecMatchLimit and act on every match (macOS); other match keys are errSecParam (iOS)")
    func matchKeysInWrites() throws {
        for account in ["alice", "bob", "carol"] { #expect(add(genericPassword(account)) == errSecSuccess) }
        #expect(update(genericPassword([kSecMatchCaseInsensitive as String: true]), [K.label: "x"]) == errSecParam)
        #expect(delete(genericPassword([kSecMatchCaseInsensitive as String: true])) == errSecParam)
        // kSecMatchLimitOne in an update changes every match, as on a Mac.
        let service: [String: Any] = [K.class: kSecClassGenericPassword, K.service: "svc"]
        #expect(update(service.merging([K.limit: kSecMatchLimitOne]) { $1 }, [K.label: "relabelled"]) == errSecSuccess)
        let labels = try #require(copy(service.merging([K.limit: kSecMatchLimitAll, K.returnAttributes: true]) { $1 }).1 as? [[String: Any]])
        #expect(labels.count == 3 && labels.allSatisfy { $0[K.label] as? String == "relabelled" })
        // KeychainAccess's removeAll(): every item of the class, with kSecMatchLimitAll.
        #expect(delete([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll]) == errSecSuccess)
        #expect(copy(service).0 == errSecItemNotFound)
        #expect(delete([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll]) == errSecItemNotFound)
    }

    @Test("Add ignores match keys and stores the item (macOS behaviour, see docs/compatibility.md)")
    func matchKeysInAdd() {
        #expect(add(genericPassword([K.limit: kSecMatchLimitOne])) == errSecSuccess)
        #expect(copy(genericPassword()).0 == errSecSuccess)
    }

    @Test("kSecMatchCaseInsensitive has no effect: matching is exact")
    func caseInsensitiveIgnored() {
        #expect(add(genericPassword("foo")) == errSecSuccess)
        #expect(copy(genericPassword("FOO", [kSecMatchCaseInsensitive as String: true])).0 == errSecItemNotFound)
    }

    @Test("A string and data with the same bytes are the same account")
    func stringAndDataCollide() {
        #expect(add(genericPassword("same")) == errSecSuccess)
        #expect(add([K.class: kSecClassGenericPassword, K.account: Data("same"), K.service: "svc"]) == errSecDuplicateItem)
        #expect(copy([K.class: kSecClassGenericPassword, K.account: Data("same")]).0 == errSecSuccess)
    }

    @Test("Supplied creation and modification dates are replaced on add")
    func datesOnAdd() throws {
        let old = Date(timeIntervalSince1970: 0)
        #expect(add(genericPassword([kSecAttrCreationDate as String: old, kSecAttrModificationDate as String: old])) == errSecSuccess)
        let found = try #require(attributes(genericPassword()))
        let created = try #require(found[kSecAttrCreationDate as String] as? Date)
        #expect(created.timeIntervalSinceNow > -60)
        #expect(found[kSecAttrModificationDate as String] as? Date == created)
    }

    @Test("Update keeps the creation date and moves the modification date strictly forward")
    func datesOnUpdate() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        let before = try #require(attributes(genericPassword()))
        for i in 0..<3 { #expect(update(genericPassword(), [K.label: "v\(i)"]) == errSecSuccess) }
        let after = try #require(attributes(genericPassword()))
        #expect(after[kSecAttrCreationDate as String] as? Date == before[kSecAttrCreationDate as String] as? Date)
        let m0 = try #require(before[kSecAttrModificationDate as String] as? Date)
        let m1 = try #require(after[kSecAttrModificationDate as String] as? Date)
        #expect(m1 > m0)
    }

    @Test("An empty attributesToUpdate succeeds and only touches the modification date")
    func emptyUpdate() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        #expect(update(genericPassword(), [:]) == errSecSuccess)
        #expect(secret(genericPassword()) == Data("pw"))
    }

    @Test("An update that fails on one item changes none of them")
    func updateIsAllOrNothing() {
        #expect(add(genericPassword("a", service: "s1")) == errSecSuccess)
        #expect(add(genericPassword("a", service: "s2")) == errSecSuccess)
        #expect(update([K.class: kSecClassGenericPassword, K.account: "a"], [K.service: "same"]) == errSecDuplicateItem)
        #expect(copy(genericPassword("a", service: "s1")).0 == errSecSuccess)
        #expect(copy(genericPassword("a", service: "s2")).0 == errSecSuccess)
        #expect(copy(genericPassword("a", service: "same")).0 == errSecItemNotFound)
    }

    @Test("kSecAttrAccessible with kSecAttrAccessControl is errSecParam; an unknown class of protection too")
    func accessibilityConflicts() throws {
        let control = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
        #expect(add(genericPassword([kSecAttrAccessControl as String: control,
                                     kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked])) == errSecParam)
        #expect(add(genericPassword([kSecAttrAccessible as String: "zz"])) == errSecParam)
        #expect(SecAccessControlCreateWithFlags(nil, "zz" as CFString, [], nil) == nil)
        let presence = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
        #expect(add(genericPassword([kSecAttrAccessControl as String: presence, K.sync: true])) == errSecParam)
    }

    @Test("kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly needs a keychain password: errSecNotAvailable")
    func passcodeClassWithoutPassword() {
        #expect(add(genericPassword([kSecAttrAccessible as String: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly])) == errSecNotAvailable)
        #expect(copy(genericPassword()).0 == errSecItemNotFound)
    }

    @Test("Oversized values are errSecDataTooLarge and store nothing")
    func oversizedValues() {
        #expect(add(genericPassword([K.data: Data(count: 16 << 20 + 1)])) == errSecDataTooLarge)
        #expect(add(genericPassword([K.label: String(repeating: "x", count: 1 << 20 + 1)])) == errSecDataTooLarge)
        #expect(copy(genericPassword()).0 == errSecItemNotFound)
        #expect(add(genericPassword([K.data: Data(count: 1 << 20)])) == errSecSuccess)
        #expect(secret(genericPassword())?.count == 1 << 20)
    }

    @Test("Keys, certificates and identities: data that is not a certificate is errSecParam; an empty keychain has none")
    func otherClasses() {
        #expect(add([K.class: kSecClassCertificate, K.data: Data("der")]) == errSecParam)
        #expect(add([K.class: kSecClassCertificate]) == errSecParam)
        #expect(copy([K.class: kSecClassKey]).0 == errSecItemNotFound)
        #expect(copy([K.class: kSecClassCertificate]).0 == errSecItemNotFound)
        #expect(copy([K.class: kSecClassIdentity]).0 == errSecItemNotFound)
        #expect(add([K.class: kSecClassIdentity, K.data: Data("x".utf8)]) == errSecParam)
        #expect(copy([K.class: kSecClassIdentity, kSecAttrService as String: "svc"]).0 == errSecNoSuchAttr)
    }

    @Test("Key items: a kSecValueRef that is not a key, or a key attribute of the wrong type, is errSecParam")
    func keyItemInput() {
        #expect(add([K.class: kSecClassKey, kSecValueRef as String: "not a key"]) == errSecParam)
        #expect(add([K.class: kSecClassGenericPassword, kSecValueRef as String: "not a key"]) == errSecParam)
        #expect(add([K.class: kSecClassKey, kSecAttrKeySizeInBits as String: Data("x".utf8)]) == errSecParam)
        #expect(add([K.class: kSecClassKey, kSecAttrService as String: "svc"]) == errSecNoSuchAttr)
        #expect(copy([K.class: kSecClassKey, kSecAttrApplicationTag as String: Date()]).0 == errSecParam)
    }

    @Test("Host matching applies to internet passwords only; issuer and policy filters to certificates only")
    func classSpecificMatchKeys() {
        #expect(copy(genericPassword([kSecMatchHostOrSubdomainOfHost as String: "example.com"])).0 == errSecUnimplemented)
        #expect(copy(genericPassword([kSecMatchIssuers as String: [Data()]])).0 == errSecUnimplemented)
    }

    @Test("kSecUseItemList is errSecParam in CopyMatching and Update")
    func useItemList() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(copy(genericPassword([kSecUseItemList as String: [Any]()])).0 == errSecParam)
        #expect(update(genericPassword([kSecUseItemList as String: [Any]()]), [K.label: "x"]) == errSecParam)
    }
}
