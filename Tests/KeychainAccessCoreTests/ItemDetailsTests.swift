import FoundationEssentials
import KeychainAccessCore
import KeychainModel
import Testing

/// The item window's Access Control page, without a display.
struct ItemDetailsTests {
    func item(access: ItemAccess?) -> StoredItem {
        StoredItem(itemClass: .genericPassword, rowID: 1, persistentReference: .rowID(.genericPassword, 1), isTombstone: false,
                   attributes: ["svce": .string("mail"), "acct": .string("ada"), "agrp": .string("keyhaven")], accessControlFlags: nil,
                   secret: nil, access: access)
    }

    @Test("The page's change: programs added are trusted, programs removed no longer are, the rest untouched; no access object means every program")
    func accessChange() {
        let trusted = ItemAccess(applications: [TrustedApplication(path: "/usr/bin/a", digest: Data([1])),
                                                TrustedApplication(path: "/usr/bin/b", digest: Data([2]))])
        let details = ItemDetails(item(access: trusted), keychainPath: "/k/login.keychain-db")
        #expect(!details.allowsEveryProgram && details.trustedPrograms == ["/usr/bin/a", "/usr/bin/b"])
        let change = details.accessChange(allowsEveryProgram: false, programs: ["/usr/bin/b", "/usr/bin/c"])
        #expect(change.trust == ["/usr/bin/c"] && change.untrust == ["/usr/bin/a"] && change.anyApplication == false)
        let open = details.accessChange(allowsEveryProgram: true, programs: details.trustedPrograms)
        #expect(open.trust.isEmpty && open.untrust.isEmpty && open.anyApplication == true)
        #expect(ItemDetails(item(access: nil), keychainPath: "/k/login.keychain-db").allowsEveryProgram)
        #expect(details.facts.first! == ("Kind", "application password") && details.facts.contains { $0 == ("Service", "mail") })
    }
}
