/// The categories of Keychain Access's sidebar, under the keychains.
package enum ItemCategory: String, Sendable, CaseIterable {
    case allItems = "All Items"
    case passwords = "Passwords"
    case keys = "Keys"
    case certificates = "Certificates"
    case myCertificates = "My Certificates"

    /// Whether `row` is shown under this category.
    package func contains(_ row: ItemRow) -> Bool {
        switch self {
        case .allItems: return true
        case .passwords: return row.itemClass == .genericPassword || row.itemClass == .internetPassword
        case .keys: return row.itemClass == .key
        case .certificates: return row.itemClass == .certificate
        case .myCertificates: return row.itemClass == .certificate && row.hasPrivateKey
        }
    }
}
