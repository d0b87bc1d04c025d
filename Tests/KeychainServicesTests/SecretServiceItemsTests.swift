import Foundation
import KeychainModel
import KeychainServices
import KeychainStore
import KeychainTestSupport
import Testing

/// Items the Secret Service added beside one another (same service and account, each with its
/// discriminator), seen through SecItem: found as Apple finds several matches, never a second
/// item of Apple's own kind with their key (docs/secret-service.md, "Items").
@Suite(.freshKeychain())
struct SecretServiceItemsTests {
    /// Three items of service `svc`, account `alice`, as the Secret Service's CreateItem without
    /// `replace` leaves them: the first without a discriminator, the others with one.
    func addSecretServiceItems() throws {
        let database = try KeychainRegistry.shared.defaultKeychain()
        let caller = Caller(accessGroups: ["test.group.a", "test.group.b"])
        for (index, discriminator) in [nil, "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"].enumerated() {
            var attributes: [String: AttributeValue] = ["svce": .string("svc"), "acct": .string("alice"), "labl": .string("item \(index)")]
            attributes[SecretServiceAttributes.discriminatorName] = discriminator.map(AttributeValue.string)
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data("secret \(index)".utf8)),
                                 caller: caller)
        }
    }

    @Test("Several matches come back as Apple returns several: all with kSecMatchLimitAll, one with kSecMatchLimitOne, no discriminator shown")
    func severalMatches() throws {
        try addSecretServiceItems()
        let (status, result) = copy(genericPassword([K.limit: kSecMatchLimitAll, K.returnAttributes: true, K.returnData: true]))
        #expect(status == errSecSuccess)
        let items = try #require(result as? [[String: Any]])
        #expect(items.compactMap { $0[K.label] as? String }.sorted() == ["item 0", "item 1", "item 2"])
        #expect(items.allSatisfy { $0[SecretServiceAttributes.discriminatorName] == nil })
        #expect(Set(items.compactMap { $0[K.data] as? Data }).count == 3)
        let (one, single) = copy(genericPassword([K.returnAttributes: true]))
        #expect(one == errSecSuccess && single is [String: Any])
    }

    @Test("SecItemAdd of their service and account is errSecDuplicateItem, even with the plain one gone; SecItemDelete removes them all")
    func duplicateAndDelete() throws {
        try addSecretServiceItems()
        #expect(add(genericPassword([K.data: Data("mine".utf8)])) == errSecDuplicateItem)
        #expect(SecItemDelete(genericPassword([K.label: "item 0"]) as CFDictionary) == errSecSuccess)
        #expect(add(genericPassword([K.data: Data("mine".utf8)])) == errSecDuplicateItem)
        #expect(update(genericPassword([K.label: "item 1"]), [K.label: "renamed"]) == errSecSuccess)
        #expect(add(genericPassword("bob", service: "svc", [K.data: Data("bob's".utf8)])) == errSecSuccess)
        #expect(update(genericPassword("bob", service: "svc"), [K.account: "alice"]) == errSecDuplicateItem)
        #expect(SecItemDelete(genericPassword() as CFDictionary) == errSecSuccess)
        #expect(copy(genericPassword()).0 == errSecItemNotFound)
        #expect(add(genericPassword([K.data: Data("mine".utf8)])) == errSecSuccess)
    }
}
