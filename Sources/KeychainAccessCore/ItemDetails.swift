import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// An item's window: its attributes as Keychain Access shows them (label, account and comment
/// editable), and its Access Control page.
package struct ItemDetails: Sendable, Equatable {
    package let row: ItemRow
    package let label: String
    package let account: String
    package let comment: String
    /// The attributes shown read-only, in order: (name, value).
    package let facts: [(String, String)]
    /// Every program may use the item without asking.
    package let allowsEveryProgram: Bool
    /// The programs trusted with it, by path (sorted).
    package let trustedPrograms: [String]
    /// Whether the item has a secret Show Password and Copy Password reveal.
    package var hasPassword: Bool { row.itemClass.isPassword }

    /// `hasPrivateKey`: the list found the certificate's private key (an identity).
    package init(_ item: StoredItem, keychainPath: String, hasPrivateKey: Bool = false) {
        var row = ItemRow(item, keychainPath: keychainPath)
        row.hasPrivateKey = hasPrivateKey
        self.row = row
        func text(_ name: AttributeName) -> String {
            switch item.attributes[name] {
            case .string(let value)?: return value
            case .data(let bytes)?: return String(bytes: bytes, encoding: .utf8) ?? ""
            default: return ""
            }
        }
        label = text(.label).isEmpty ? row.name : text(.label)
        account = text(.account)
        comment = text(.comment)
        var facts: [(String, String)] = [("Kind", row.kind)]
        if !row.location.isEmpty { facts.append((row.itemClass == .internetPassword ? "Where" : "Service", row.location)) }
        if case .date(let created)? = item.attributes[.creationDate] { facts.append(("Created", ItemBrowser.format(created))) }
        if let modified = row.modified { facts.append(("Modified", ItemBrowser.format(modified))) }
        facts.append(("Keychain", row.keychain))
        facts.append(("Access group", text(.accessGroup)))
        if case .number(1)? = item.attributes[.synchronizable] { facts.append(("Synchronizable", "Yes")) }
        self.facts = facts
        allowsEveryProgram = item.access?.anyApplication ?? (item.access == nil)
        trustedPrograms = (item.access?.applications.map(\.path) ?? []).filter { !$0.isEmpty }.sorted()
    }

    /// The change the Access Control page asks for: programs added are trusted, programs
    /// removed are not, and the item is open to every program or not.
    package func accessChange(allowsEveryProgram: Bool, programs: [String]) -> AccessChange {
        AccessChange(trust: programs.filter { !trustedPrograms.contains($0) }, untrust: trustedPrograms.filter { !programs.contains($0) },
                     anyApplication: allowsEveryProgram)
    }

    package static func == (a: ItemDetails, b: ItemDetails) -> Bool {
        a.row == b.row && a.label == b.label && a.account == b.account && a.comment == b.comment
            && a.facts.map { $0.0 + "\u{0}" + $0.1 } == b.facts.map { $0.0 + "\u{0}" + $0.1 }
            && a.allowsEveryProgram == b.allowsEveryProgram && a.trustedPrograms == b.trustedPrograms
    }
}
