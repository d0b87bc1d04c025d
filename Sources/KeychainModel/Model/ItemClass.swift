/// The item classes the engine stores. Raw values are Apple's wire names and SQL table names.
package enum ItemClass: String, Sendable, Hashable, CaseIterable {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case key = "keys"
    case certificate = "cert"

    /// The attribute schema of this class, in Apple's column order.
    package var schema: ItemSchema {
        switch self {
        case .genericPassword: return .genericPassword
        case .internetPassword: return .internetPassword
        case .key: return .key
        case .certificate: return .certificate
        }
    }

    /// A generic or an internet password: an item whose secret is all a program reads of it.
    package var isPassword: Bool { self == .genericPassword || self == .internetPassword }
}
