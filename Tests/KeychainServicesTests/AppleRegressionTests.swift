import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// Ports of Apple's own SecItem regression tests (the `si-*` tests of Apple's Security project) for password items.
/// Each test names the Apple test it ports.
@Suite(.freshKeychain())
struct AppleRegressionTests {
    @Test("si-00-find-nothing: an empty keychain finds nothing and leaves result nil")
    func findNothing() {
        var result: CFTypeRef?
        let status = SecItemCopyMatching([K.class: kSecClassInternetPassword] as CFDictionary, &result)
        #expect(status == errSecItemNotFound)
        #expect(result == nil)
    }

    @Test("si-05-add (1, 1a, 1b): add, duplicate add, result pointer without return keys")
    func addDuplicateAndNoReturnKeys() {
        #expect(add(genericPassword("one", [K.data: Data("x")])) == errSecSuccess)
        #expect(add(genericPassword("one", [K.data: Data("x")])) == errSecDuplicateItem)
        let (status, result) = addReturning(genericPassword("two", [K.data: Data("x")]))
        #expect(status == errSecSuccess)
        #expect(result == nil)
    }

    @Test("si-05-add (2): ReturnPersistentRef gives a ref that finds the item's data")
    func addReturningPersistentRef() throws {
        let (status, result) = addReturning(genericPassword([K.data: Data("secret"), K.returnPersistentRef: true]))
        #expect(status == errSecSuccess)
        let ref = try #require(result as? Data)
        let (found, data) = copy([K.persistentRef: ref, K.returnData: true])
        #expect(found == errSecSuccess)
        #expect(data as? Data == Data("secret"))
    }

    @Test("si-05-add (3, 4): ReturnData gives the data; ReturnRef on a password gives nothing")
    func addReturningDataOrRef() {
        let (status, result) = addReturning(genericPassword("a", [K.data: Data("pw"), K.returnData: true]))
        #expect(status == errSecSuccess)
        #expect(result as? Data == Data("pw"))
        let (refStatus, ref) = addReturning(genericPassword("b", [K.data: Data("pw"), K.returnRef: true]))
        #expect(refStatus == errSecSuccess)
        #expect(ref == nil)
    }

    @Test("si-05-add (5): ReturnAttributes gives attributes without data or refs; numbers are NSNumber")
    func addReturningAttributes() throws {
        let (status, result) = addReturning(genericPassword([K.data: Data("pw"), K.returnAttributes: true,
                                                             kSecAttrType as String: 42]))
        #expect(status == errSecSuccess)
        let attributes = try #require(result as? [String: Any])
        #expect(attributes[K.data] == nil)
        #expect(attributes[kSecValueRef as String] == nil)
        #expect(attributes[K.persistentRef] == nil)
        #expect(attributes[kSecAttrType as String] as? NSNumber == 42)
        #expect(attributes[K.sync] as? NSNumber == 0)
    }

    @Test("si-05-add (6): all four return keys give one dictionary with data, persistent ref and class")
    func addReturningEverything() throws {
        let (status, result) = addReturning(genericPassword([K.data: Data("pw"), K.returnAttributes: true, K.returnData: true,
                                                             K.returnRef: true, K.returnPersistentRef: true]))
        #expect(status == errSecSuccess)
        let dictionary = try #require(result as? [String: Any])
        #expect(dictionary[K.data] as? Data == Data("pw"))
        #expect((dictionary[K.persistentRef] as? Data)?.count == 20)
        #expect(dictionary[K.class] as? String == "genp")
        #expect(dictionary[K.account] as? String == "alice")
    }

    @Test("si-05-add (7): an attribute the class lacks is errSecNoSuchAttr on add and delete")
    func attributeOfAnotherClass() {
        #expect(add(genericPassword([K.server: "host"])) == errSecNoSuchAttr)
        #expect(delete(genericPassword([K.server: "host"])) == errSecNoSuchAttr)
    }

    @Test("si-05-add (8): synchronizable items add and delete")
    func synchronizableAddDelete() {
        #expect(add(genericPassword([K.sync: true])) == errSecSuccess)
        #expect(delete(genericPassword([K.sync: true])) == errSecSuccess)
    }

    static var smith: [String: Any] {
        internetPassword(server: "members.spamcop.net", account: "smith", [
            kSecAttrPort as String: 80, kSecAttrProtocol as String: kSecAttrProtocolHTTP,
            kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeDefault,
        ])
    }

    @Test("si-10-find-internet (a): internet password add, then duplicate")
    func internetAddAndDuplicate() {
        var item = Self.smith
        item[K.data] = Data("password")
        #expect(add(item) == errSecSuccess)
        #expect(add(item) == errSecDuplicateItem)
    }

    @Test("si-10-find-internet (b): returned attributes, minus sha1 plus class, find the item again")
    func requeryWithReturnedAttributes() throws {
        var item = Self.smith
        item[K.data] = Data("password")
        #expect(add(item) == errSecSuccess)
        #expect(copy(Self.smith).0 == errSecSuccess)
        var query = Self.smith
        query[K.returnAttributes] = true
        query[K.limit] = kSecMatchLimitOne
        var attributes = try #require(copy(query).1 as? [String: Any])
        #expect(attributes[kSecAttrProtocol as String] as? String == "http")
        #expect(attributes[kSecAttrPort as String] as? NSNumber == 80)
        attributes[kSecAttrSHA1 as String] = nil
        attributes[K.class] = kSecClassInternetPassword
        attributes[K.returnData] = true
        let (status, data) = copy(attributes)
        #expect(status == errSecSuccess)
        #expect(data as? Data == Data("password"))
    }

    @Test("si-10-find-internet (c): update the server; the same update again and the old query find nothing")
    func internetUpdateServer() {
        #expect(add(Self.smith) == errSecSuccess)
        #expect(update(Self.smith, [K.server: "www.spamcop.net"]) == errSecSuccess)
        #expect(update(Self.smith, [K.server: "www.spamcop.net"]) == errSecItemNotFound)
        #expect(delete(Self.smith) == errSecItemNotFound)
        var moved = Self.smith
        moved[K.server] = "www.spamcop.net"
        #expect(delete(moved) == errSecSuccess)
    }

    @Test("si-10-find-internet (d): an update onto an existing item's key is errSecDuplicateItem; both remain")
    func internetUpdateCausingDuplicate() {
        var other = Self.smith
        other[K.server] = "www.spamcop.net"
        #expect(add(Self.smith) == errSecSuccess)
        #expect(add(other) == errSecSuccess)
        #expect(update(Self.smith, [K.server: "www.spamcop.net"]) == errSecDuplicateItem)
        #expect(delete(Self.smith) == errSecSuccess)
        #expect(delete(other) == errSecSuccess)
    }

    @Test("si-11-update-data: update data; NSNull or a string as data is errSecParam")
    func updateData() {
        #expect(add(genericPassword([K.data: Data("one")])) == errSecSuccess)
        #expect(update(genericPassword(), [K.data: Data("two")]) == errSecSuccess)
        #expect(secret(genericPassword()) == Data("two"))
        #expect(update(genericPassword(), [K.data: NSNull()]) == errSecParam)
        #expect(update(genericPassword(), [K.data: "a string"]) == errSecParam)
        #expect(secret(genericPassword()) == Data("two"))
        #expect(delete(genericPassword()) == errSecSuccess)
    }

    @Test("si-12-item-stress: tombstones only with kSecUseTombstones, found only by kSecAttrTombstone",
          arguments: ["genp", "inet"])
    func tombstones(itemClass: String) {
        let item: [String: Any] = [K.class: itemClass, K.account: "t", K.sync: true, K.data: Data("x")]
        let tombstoneQuery: [String: Any] = [K.class: itemClass, K.account: "t", K.sync: true, kSecAttrTombstone as String: true]
        #expect(add(item) == errSecSuccess)
        var buried = item
        buried[K.data] = nil
        buried[kSecUseTombstones as String] = true
        #expect(delete(buried) == errSecSuccess)
        #expect(copy([K.class: itemClass, K.account: "t", K.sync: true]).0 == errSecItemNotFound)
        #expect(copy(tombstoneQuery).0 == errSecSuccess)
        #expect(secret(tombstoneQuery) == nil)
        // A later add with the same key replaces the tombstone.
        #expect(add(item) == errSecSuccess)
        #expect(copy(tombstoneQuery).0 == errSecItemNotFound)
        var plain = item
        plain[K.data] = nil
        plain[kSecUseTombstones as String] = false
        #expect(delete(plain) == errSecSuccess)
        #expect(copy(tombstoneQuery).0 == errSecItemNotFound)
        // A local item leaves no tombstone by default.
        let local: [String: Any] = [K.class: itemClass, K.account: "local"]
        #expect(add(local) == errSecSuccess)
        #expect(delete(local) == errSecSuccess)
        #expect(copy([K.class: itemClass, K.account: "local", kSecAttrTombstone as String: true]).0 == errSecItemNotFound)
    }

    @Test("si-15-delete-access-group: deleting by group removes only that group's items")
    func deleteByAccessGroup() {
        #expect(add(genericPassword("x", [K.group: "test.group.a"])) == errSecSuccess)
        #expect(add(genericPassword("y", [K.group: "test.group.b"])) == errSecSuccess)
        #expect(delete([K.class: kSecClassGenericPassword, K.group: "test.group.a"]) == errSecSuccess)
        #expect(copy(genericPassword("x")).0 == errSecItemNotFound)
        #expect(copy(genericPassword("y")).0 == errSecSuccess)
    }

    @Test("si-43-persistent: a persistent ref finds, updates and deletes exactly its item")
    func persistentReferences() throws {
        var item = Self.smith
        item[K.returnPersistentRef] = true
        let ref = try #require(addReturning(item).1 as? Data)
        #expect(add(internetPassword(server: "other.example.com")) == errSecSuccess)
        let byRef = try #require(copy([K.persistentRef: ref, K.returnAttributes: true]).1 as? [String: Any])
        let byAttributes = try #require(attributes(Self.smith))
        #expect(NSDictionary(dictionary: byRef.filter { $0.key != "accc" }) == NSDictionary(dictionary: byAttributes.filter { $0.key != "accc" }))
        #expect(update([K.persistentRef: ref], [K.label: "changed"]) == errSecSuccess)
        #expect(attributes(Self.smith)?[K.label] as? String == "changed")
        #expect(attributes(internetPassword(server: "other.example.com"))?[K.label] == nil)
        #expect(delete([K.persistentRef: ref]) == errSecSuccess)
        #expect(copy([K.persistentRef: ref]).0 == errSecItemNotFound)
        #expect(copy(Self.smith).0 == errSecItemNotFound)
        #expect(copy(internetPassword(server: "other.example.com")).0 == errSecSuccess)
    }

    @Test("si-72-syncableitems: a synchronizable item is found by sync=true and sync=Any, updated and deleted")
    func synchronizableItems() {
        let (status, result) = addReturning(genericPassword([K.sync: true, K.returnAttributes: true]))
        #expect(status == errSecSuccess)
        #expect((result as? [String: Any])?[K.sync] as? NSNumber == 1)
        #expect(copy(genericPassword([K.sync: true])).0 == errSecSuccess)
        #expect(copy(genericPassword([K.sync: kSecAttrSynchronizableAny])).0 == errSecSuccess)
        #expect(update(genericPassword([K.sync: true]), [kSecAttrComment as String: "new comment"]) == errSecSuccess)
        #expect(copy(genericPassword([K.sync: true, kSecAttrComment as String: "new comment"])).0 == errSecSuccess)
        #expect(delete(genericPassword([K.sync: true])) == errSecSuccess)
    }

    @Test("si-78-query-attrs: LimitAll result shapes with data and persistent refs")
    func limitAllShapes() throws {
        #expect(add(genericPassword([K.data: Data("pw")])) == errSecSuccess)
        let both = try #require(copy(genericPassword([K.limit: kSecMatchLimitAll, K.returnData: true,
                                                      K.returnPersistentRef: true])).1 as? [[String: Any]])
        #expect(both.count == 1)
        #expect(both.first?[K.data] as? Data == Data("pw"))
        #expect(both.first?[K.persistentRef] is Data)
        let data = try #require(copy(genericPassword([K.limit: kSecMatchLimitAll, K.returnData: true])).1 as? [Data])
        #expect(data == [Data("pw")])
        let refs = try #require(copy(genericPassword([K.limit: kSecMatchLimitAll, K.returnPersistentRef: true])).1 as? [Data])
        #expect(refs.count == 1 && refs[0].count == 20)
    }

    @Test("si-80-empty-data: an item without data returns attributes and no data")
    func itemWithoutData() throws {
        #expect(add(genericPassword()) == errSecSuccess)
        let items = try #require(copy(genericPassword([K.limit: kSecMatchLimitAll, K.returnData: true,
                                                       K.returnAttributes: true])).1 as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items[0][K.data] == nil)
        #expect(items[0][K.service] as? String == "svc")
        #expect(items[0][K.account] as? String == "alice")
    }

    @Test("si-82-token-ag: the token group cannot be written; a caller without it cannot name it")
    func tokenAccessGroup() {
        #expect(add(genericPassword([K.group: "com.apple.token"])) == errSecMissingEntitlement)
        #expect(copy(genericPassword([K.group: "com.apple.token"])).0 == errSecMissingEntitlement)
    }

    @Test("secd-81-item-acl: an invalid constraint cannot be made; UISkip outside CopyMatching is errSecParam")
    func accessControlRules() throws {
        var error: Unmanaged<CFError>?
        let invalid = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.or, .and], &error)
        #expect(invalid == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
        let skip: [String: Any] = [kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip]
        #expect(add(genericPassword(skip)) == errSecParam)
        #expect(delete(genericPassword(skip)) == errSecParam)
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(update(genericPassword(), [kSecUseCredentialReference as String: Data()]) == errSecNoSuchAttr)
        let control = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [], nil))
        #expect(update(genericPassword(), [kSecAttrAccessControl as String: control]) == errSecSuccess)
        #expect(attributes(genericPassword())?[kSecAttrAccessible as String] as? String == "ck")
    }

    @Test("secd-82-persistent-ref: sync=Any with attributes and persistent refs gives an array of one dictionary")
    func persistentRefWithAttributes() throws {
        #expect(add(genericPassword([kSecAttrAccessible as String: kSecAttrAccessibleAlways])) == errSecSuccess)
        let items = try #require(copy([K.class: kSecClassGenericPassword, K.account: "alice", K.sync: kSecAttrSynchronizableAny,
                                       K.returnAttributes: true, K.returnPersistentRef: true,
                                       K.limit: kSecMatchLimitAll]).1 as? [[String: Any]])
        #expect(items.count == 1)
        #expect((items[0][K.persistentRef] as? Data)?.count == 20)
    }

    @Test("testReturnValuesInSecItemUpdate: a return key in an update query is errSecParam (iOS)")
    func returnKeyInUpdate() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(update(genericPassword([K.returnData: true]), [K.label: "x"]) == errSecParam)
    }

    @Test("testBadTypeInParams: kSecAttrAccessControl as a string is errSecParam on add and delete")
    func accessControlOfWrongType() {
        #expect(add(genericPassword([kSecAttrAccessControl as String: "ak"])) == errSecParam)
        #expect(delete(genericPassword([kSecAttrAccessControl as String: "ak"])) == errSecParam)
    }

    @Test("testServerUsingDataType: a server given as data comes back as data")
    func serverAsData() throws {
        let server = Data("data.example.com")
        #expect(add(internetPassword([K.server: server])) == errSecSuccess)
        let found = try #require(attributes([K.class: kSecClassInternetPassword, K.server: server]))
        #expect(found[K.server] as? Data == server)
    }

    @Test("testNotAllowedToPassInternalAttributes: kSecAttrAppClipItem is errSecParam everywhere")
    func appClipAttribute() {
        let clip: [String: Any] = ["clip": true]
        #expect(add(genericPassword(clip)) == errSecParam)
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(copy(genericPassword(clip)).0 == errSecParam)
        #expect(update(genericPassword(clip), [K.label: "x"]) == errSecParam)
        #expect(update(genericPassword(), clip) == errSecParam)
        #expect(delete(genericPassword(clip)) == errSecParam)
    }

    @Test("testGenpReturnRef / testInetReturnRef: ReturnRef on password classes succeeds with nil",
          arguments: ["genp", "inet"])
    func returnRefOnPasswords(itemClass: String) {
        var withRef = itemClass == "genp" ? genericPassword() : internetPassword()
        withRef[K.returnRef] = true
        let (status, result) = addReturning(withRef)
        #expect(status == errSecSuccess)
        #expect(result == nil)
        let (found, ref) = copy(withRef)
        #expect(found == errSecSuccess)
        #expect(ref == nil)
    }

    @Test("testSecItemAddAndCopyMatchingWithUUIDPersistentRefs: class bytes + 16-byte UUID; no persistref attribute")
    func uuidPersistentRefs() throws {
        let ref = try #require(addReturning(genericPassword([K.returnPersistentRef: true])).1 as? Data)
        #expect(ref.count == 20)
        #expect(String(data: ref.prefix(4), encoding: .utf8) == "genp")
        let found = try #require(copy([K.persistentRef: ref, K.returnAttributes: true]).1 as? [String: Any])
        #expect(found["persistref"] == nil)
        #expect(found[K.account] as? String == "alice")
    }

    @Test("testSecItemCopyMatchingHostorSubdomain: a host or a parent domain finds the server")
    func hostOrSubdomain() {
        #expect(add(internetPassword(server: "origin.example.com")) == errSecSuccess)
        let match = kSecMatchHostOrSubdomainOfHost as String
        #expect(copy([K.class: kSecClassInternetPassword, match: "example.com"]).0 == errSecSuccess)
        #expect(copy([K.class: kSecClassInternetPassword, match: "origin.example.com"]).0 == errSecSuccess)
        #expect(copy([K.class: kSecClassInternetPassword, match: "foobar.com"]).0 == errSecItemNotFound)
        #expect(copy([K.class: kSecClassInternetPassword, match: "ample.com"]).0 == errSecItemNotFound)
    }

    @Test("testAddCollidingGenericPassword / testMoveGenericPassword")
    func collideAndMove() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(add(genericPassword()) == errSecDuplicateItem)
        #expect(update(genericPassword(), [K.account: "bob", K.service: "svc2"]) == errSecSuccess)
        #expect(update(genericPassword(), [K.account: "bob", K.service: "svc2"]) == errSecItemNotFound)
        #expect(copy(genericPassword("bob", service: "svc2")).0 == errSecSuccess)
    }

    @Test("testBadPort: an empty-string port is accepted (iOS)")
    func emptyStringPort() {
        #expect(add(internetPassword([kSecAttrPort as String: ""])) == errSecSuccess)
    }

    @Test("testReturnValuesInSecItemUpdate counterpart: kSecClass in attributesToUpdate is errSecNoSuchAttr")
    func classInAttributesToUpdate() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(update(genericPassword(), [K.class: kSecClassInternetPassword]) == errSecNoSuchAttr)
    }
}
