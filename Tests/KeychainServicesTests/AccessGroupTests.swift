import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// Access groups (Apple's entitlements) and Apple's KeychainEntitlementsTest scenarios.
@Suite(.freshKeychain(accessGroups: ["27AEDK3C9F.shared", "123.my.test.group"]))
struct AccessGroupTests {
    private func setGroups(_ groups: [String]) { SecAccessGroupsSetCurrent(NSArray(array: groups)) }

    @Test("testNoEntitlements: with no groups every call is errSecMissingEntitlement")
    func noGroups() {
        setGroups([])
        #expect(copy(genericPassword()).0 == errSecMissingEntitlement)
        #expect(add(genericPassword()) == errSecMissingEntitlement)
        #expect(update(genericPassword(), [K.label: "x"]) == errSecMissingEntitlement)
        #expect(delete(genericPassword()) == errSecMissingEntitlement)
    }

    @Test("testEntitlementForExplicitAccessGroupLacking: an ungranted group is refused until granted")
    func explicitGroupLacking() {
        let lacking = genericPassword([K.group: "other.group"])
        #expect(add(lacking) == errSecMissingEntitlement)
        #expect(copy(lacking).0 == errSecMissingEntitlement)
        #expect(update(lacking, [K.label: "x"]) == errSecMissingEntitlement)
        #expect(delete(lacking) == errSecMissingEntitlement)
        setGroups(["27AEDK3C9F.shared", "other.group"])
        #expect(add(lacking) == errSecSuccess)
        #expect(copy(lacking).0 == errSecSuccess)
        #expect(update(lacking, [K.group: "not.mine"]) == errSecMissingEntitlement)
        #expect(copy(lacking).0 == errSecSuccess)
    }

    @Test("testEntitlementForImplicitAccessGroupLacking: other groups' items are simply invisible")
    func implicitGroupLacking() {
        #expect(add(genericPassword([K.group: "123.my.test.group"])) == errSecSuccess)
        setGroups(["27AEDK3C9F.shared"])
        #expect(copy(genericPassword()).0 == errSecItemNotFound)
        #expect(update(genericPassword(), [K.label: "x"]) == errSecItemNotFound)
        #expect(delete(genericPassword()) == errSecItemNotFound)
        setGroups(["27AEDK3C9F.shared", "123.my.test.group"])
        #expect(update(genericPassword(), [K.label: "new label"]) == errSecSuccess)
        #expect(copy(genericPassword([K.label: "new label"])).0 == errSecSuccess)
        #expect(delete(genericPassword()) == errSecSuccess)
    }

    @Test("testValidEntitlementsAppID: an add without a group goes to the first group")
    func defaultGroupIsFirst() {
        #expect(add(genericPassword()) == errSecSuccess)
        #expect(attributes(genericPassword())?[K.group] as? String == "27AEDK3C9F.shared")
        setGroups(["123.my.test.group", "27AEDK3C9F.shared"])
        #expect(add(genericPassword("second")) == errSecSuccess)
        #expect(attributes(genericPassword("second"))?[K.group] as? String == "123.my.test.group")
    }

    @Test("testDisallowTokenGroupWrite: the token group is read-only")
    func tokenGroupOnly() {
        setGroups(["com.apple.token"])
        #expect(copy(genericPassword([K.group: "com.apple.token"])).0 == errSecItemNotFound)
        #expect(add(genericPassword([K.group: "com.apple.token"])) == errSecMissingEntitlement)
        #expect(add(genericPassword()) == errSecMissingEntitlement)
        #expect(delete(genericPassword([K.group: "com.apple.token"])) == errSecMissingEntitlement)
    }

    @Test("A query without a group sees every group the caller has; with one, only that group")
    func queriesSpanGroups() throws {
        #expect(add(genericPassword("a", [K.group: "27AEDK3C9F.shared"])) == errSecSuccess)
        #expect(add(genericPassword("b", [K.group: "123.my.test.group"])) == errSecSuccess)
        let all = try #require(copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll,
                                     K.returnAttributes: true]).1 as? [[String: Any]])
        #expect(all.compactMap { $0[K.account] as? String } == ["a", "b"])
        let one = try #require(copy([K.class: kSecClassGenericPassword, K.limit: kSecMatchLimitAll, K.group: "123.my.test.group",
                                     K.returnAttributes: true]).1 as? [[String: Any]])
        #expect(one.compactMap { $0[K.account] as? String } == ["b"])
    }

    @Test("The same account and service in two groups are two items")
    func groupIsPartOfThePrimaryKey() {
        #expect(add(genericPassword([K.group: "27AEDK3C9F.shared", K.data: Data("1")])) == errSecSuccess)
        #expect(add(genericPassword([K.group: "123.my.test.group", K.data: Data("2")])) == errSecSuccess)
        #expect(secret(genericPassword([K.group: "123.my.test.group"])) == Data("2"))
    }

    @Test("The group \"*\" sees every group's items")
    func unrestrictedCaller() {
        #expect(add(genericPassword([K.group: "123.my.test.group"])) == errSecSuccess)
        setGroups(["*"])
        #expect(copy(genericPassword()).0 == errSecSuccess)
        #expect(copy(genericPassword([K.group: "123.my.test.group"])).0 == errSecSuccess)
    }

    @Test("SecAccessGroupsGetCurrent returns the list in order")
    func getCurrent() {
        #expect(SecAccessGroupsGetCurrent() as? [String] == ["27AEDK3C9F.shared", "123.my.test.group"])
    }
}
