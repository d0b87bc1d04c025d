import Foundation
import KeychainServices

/// A generic password's attributes, as the listing functions return them (never its secret).
public struct KeychainItem: Sendable, Hashable {
    public let service: String
    public let account: String
    public let label: String?
    public let accessGroup: String?
    public let isSynchronizable: Bool
    /// Nil for a class this API does not name (such as `kSecAttrAccessibleAlways`).
    public let accessibility: Accessibility?
    public let creationDate: Date?
    public let modificationDate: Date?

    init(attributes: [String: Any]) {
        func text(_ key: CFString) -> String? {
            switch attributes[key as String] {
            case let s as String: return s
            case let d as Data: return String(data: d, encoding: .utf8)
            default: return nil
            }
        }
        service = text(kSecAttrService) ?? ""
        account = text(kSecAttrAccount) ?? ""
        label = text(kSecAttrLabel)
        accessGroup = text(kSecAttrAccessGroup)
        isSynchronizable = (attributes[kSecAttrSynchronizable as String] as? NSNumber)?.boolValue ?? false
        accessibility = text(kSecAttrAccessible).flatMap(Accessibility.init(rawValue:))
        creationDate = attributes[kSecAttrCreationDate as String] as? Date
        modificationDate = attributes[kSecAttrModificationDate as String] as? Date
    }
}
