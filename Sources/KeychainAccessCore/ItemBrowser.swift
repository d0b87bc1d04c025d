import FoundationEssentials

/// What the items list shows: the rows of the selected keychain, in the selected category,
/// matching the search as typed, sorted by a column. Plain values, so that the window only draws
/// what this says and tests need no display.
package struct ItemBrowser: Sendable, Equatable {
    /// The items list's columns, in order.
    package enum Column: String, Sendable, CaseIterable {
        case name = "Name", kind = "Kind", account = "Account", location = "Where", modified = "Date Modified", keychain = "Keychain"
    }

    package var category: ItemCategory = .allItems
    package var search = ""
    package var sortColumn: Column = .name
    package var ascending = true

    package init() {}

    /// Marks certificates whose private key is among `rows` (same keychain, same key hash).
    package static func pairIdentities(_ rows: [ItemRow]) -> [ItemRow] {
        let keys = Set(rows.filter { $0.itemClass == .key }.compactMap { row in row.keyHash.map { row.keychainPath + "#" + $0.base64EncodedString() } })
        return rows.map { row in
            guard row.itemClass == .certificate, let hash = row.keyHash else { return row }
            var paired = row
            paired.hasPrivateKey = keys.contains(row.keychainPath + "#" + hash.base64EncodedString())
            return paired
        }
    }

    /// The rows shown, in order. Every word of the search must appear in the name, account,
    /// service or server, or comment (case ignored).
    package func shown(_ rows: [ItemRow]) -> [ItemRow] {
        let words = search.lowercased().split(whereSeparator: \.isWhitespace).map(String.init)
        let kept = rows.filter { row in category.contains(row) && words.allSatisfy { row.searchText.contains($0) } }
        return kept.sorted { a, b in
            let order = Self.compare(a, b, by: sortColumn)
            if order != 0 { return ascending ? order < 0 : order > 0 }
            return a.id < b.id
        }
    }

    /// The text of `row` in `column`, as the list shows it.
    package static func text(_ row: ItemRow, _ column: Column) -> String {
        switch column {
        case .name: return row.name
        case .kind: return row.kind
        case .account: return row.account
        case .location: return row.location
        case .modified: return row.modified.map(Self.format) ?? "--"
        case .keychain: return row.keychain
        }
    }

    package static func compare(_ a: ItemRow, _ b: ItemRow, by column: Column) -> Int {
        if column == .modified {
            let (x, y) = (a.modified ?? .distantPast, b.modified ?? .distantPast)
            return x == y ? 0 : (x < y ? -1 : 1)
        }
        let (x, y) = (text(a, column).lowercased(), text(b, column).lowercased())
        return x == y ? 0 : (x < y ? -1 : 1)
    }

    /// A date as the window shows it.
    package static func text(date: Date) -> String { format(date) }

    /// `YYYY-MM-DD hh:mm`, in UTC: the same on every machine the tests run on.
    static func format(_ date: Date) -> String {
        // ISO 8601's `YYYY-MM-DDThh:mm:ssZ`, shown without the seconds and the letters.
        let iso = date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
        return String(iso.prefix(16).map { $0 == "T" ? " " : $0 })
    }
}
