import FoundationEssentials
import KeychainAccessCore
import KeychainModel
import Testing

/// The items list's logic without a display or an agent: rows from stored items, categories,
/// search and sorting.
@Suite("Keychain Access's items list")
struct ItemBrowserTests {

    static func item(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], id: UInt8) -> StoredItem {
        StoredItem(itemClass: itemClass, rowID: Int64(id), persistentReference: .uuid(itemClass, Data(repeating: id, count: 16)),
                   isTombstone: false, attributes: attributes, accessControlFlags: nil, secret: nil)
    }

    static let keychain = "/home/ada/.local/share/keyhaven/login.keychain-db"
    static let rows: [ItemRow] = ItemBrowser.pairIdentities([
        item(.genericPassword, ["labl": .string("Mail"), "svce": .string("imap.example.org"), "acct": .string("ada"),
                                "mdat": .date(Date(timeIntervalSince1970: 1_800_000_000))], id: 1),
        item(.internetPassword, ["srvr": .string("github.com"), "ptcl": .string("htps"), "port": .number(0), "acct": .string("octo"),
                                 "icmt": .string("work account"), "mdat": .date(Date(timeIntervalSince1970: 1_700_000_000))], id: 2),
        item(.key, ["labl": .string("Ada's key"), "kcls": .number(1), "klbl": .data(Data([9, 9]))], id: 3),
        item(.certificate, ["labl": .string("Ada Lovelace"), "pkhh": .data(Data([9, 9]))], id: 4),
        item(.certificate, ["labl": .string("Example CA"), "pkhh": .data(Data([7]))], id: 5),
    ].map { ItemRow($0, keychainPath: keychain) })

    @Test("A row says what Keychain Access shows: name, kind, account, where, date, keychain")
    func rowColumns() throws {
        let mail = try #require(Self.rows.first { $0.name == "Mail" })
        #expect(ItemBrowser.Column.allCases.map { ItemBrowser.text(mail, $0) }
                == ["Mail", "application password", "ada", "imap.example.org", "2027-01-15 08:00", "login"])
        let github = try #require(Self.rows.first { $0.account == "octo" })
        #expect(github.name == "https://github.com" && github.kind == "Internet password" && github.location == "https://github.com")
        #expect(Self.rows.map(\.kind).contains("private key"))
        #expect(ItemBrowser.Column.allCases.map(\.rawValue) == ["Name", "Kind", "Account", "Where", "Date Modified", "Keychain"])
    }

    @Test("Categories: passwords, keys, certificates, and My Certificates only those with their private key")
    func categories() {
        var browser = ItemBrowser()
        func names(_ category: ItemCategory) -> [String] {
            browser.category = category
            return browser.shown(Self.rows).map(\.name)
        }
        #expect(names(.allItems).count == 5)
        #expect(names(.passwords) == ["https://github.com", "Mail"])
        #expect(names(.keys) == ["Ada's key"])
        #expect(names(.certificates) == ["Ada Lovelace", "Example CA"])
        #expect(names(.myCertificates) == ["Ada Lovelace"])
    }

    @Test("Search filters as typed over name, account, service, server and comment; every word must match, case ignored")
    func search() {
        var browser = ItemBrowser()
        func names(_ text: String) -> [String] {
            browser.search = text
            return browser.shown(Self.rows).map(\.name)
        }
        #expect(names("ADA") == ["Ada Lovelace", "Ada's key", "Mail"])
        #expect(names("imap") == ["Mail"])
        #expect(names("github") == ["https://github.com"])
        #expect(names("work") == ["https://github.com"])
        #expect(names("octo work") == ["https://github.com"])
        #expect(names("octo mail").isEmpty)
        #expect(names("  ").count == 5)
    }

    @Test("Sorting by any column, both ways; a missing date sorts first")
    func sorting() {
        var browser = ItemBrowser()
        browser.category = .passwords
        browser.sortColumn = .modified
        #expect(browser.shown(Self.rows).map(\.account) == ["octo", "ada"])
        browser.ascending = false
        #expect(browser.shown(Self.rows).map(\.account) == ["ada", "octo"])
        browser.category = .allItems
        browser.sortColumn = .kind
        browser.ascending = true
        #expect(browser.shown(Self.rows).map(\.kind) == ["application password", "certificate", "certificate", "Internet password", "private key"])
        browser.sortColumn = .modified
        #expect(browser.shown(Self.rows).prefix(3).allSatisfy { $0.modified == nil })
    }
}
