import FoundationEssentials
import KeychainModel

/// One line of the items list: what Keychain Access shows of an item, read from its attributes
/// (never its secret).
package struct ItemRow: Sendable, Equatable, Identifiable {
    /// The keychain's path and the item's persistent reference: unique across keychains.
    package let id: String
    package let itemClass: ItemClass
    package let persistentReference: PersistentReference
    /// The label, else the service or server.
    package let name: String
    /// The kind, as Keychain Access says it: the item's own (`desc`) or its class's.
    package let kind: String
    package let account: String
    /// The service of a generic password, the URL of an internet password.
    package let location: String
    package let comment: String
    package let modified: Date?
    /// The keychain's path, and its name as shown.
    package let keychainPath: String
    package let keychain: String
    /// For a certificate: a private key of the same keychain matches its public key (an identity).
    package var hasPrivateKey = false
    /// A key's label (`klbl`) or a certificate's public key hash (`pkhh`): how identities pair.
    package let keyHash: Data?

    package init(_ item: StoredItem, keychainPath: String) {
        let attributes = item.attributes
        func text(_ name: AttributeName) -> String? {
            switch attributes[name] {
            case .string(let value)?: return value.isEmpty ? nil : value
            case .data(let bytes)?: return String(bytes: bytes, encoding: .utf8).flatMap { $0.isEmpty ? nil : $0 }
            default: return nil
            }
        }
        itemClass = item.itemClass
        persistentReference = item.persistentReference
        id = keychainPath + "#" + item.persistentReference.bytes.map { String($0, radix: 16) }.joined(separator: ".")
        let location: String
        switch item.itemClass {
        case .internetPassword: location = Self.url(scheme: text(.protocol), server: text(.server), port: attributes[.port], path: text(.path))
        case .genericPassword: location = text(.service) ?? ""
        default: location = ""
        }
        self.location = location
        name = text(.label) ?? (location.isEmpty ? Self.kindName(item) : location)
        kind = text(.description) ?? Self.kindName(item)
        account = text(.account) ?? ""
        comment = text(.comment) ?? ""
        if case .date(let date)? = attributes[.modificationDate] { modified = date } else { modified = nil }
        self.keychainPath = keychainPath
        keychain = KeychainPreferences.fileName(keychainPath)
        switch (item.itemClass, attributes[.applicationLabel], attributes[.publicKeyHash]) {
        case (.key, .data(let hash)?, _), (.certificate, _, .data(let hash)?): keyHash = hash
        default: keyHash = nil
        }
    }

    /// The words a search looks in: name, account, service or server, comment.
    package var searchText: String { [name, account, location, comment].joined(separator: "\n").lowercased() }

    static func kindName(_ item: StoredItem) -> String {
        switch item.itemClass {
        case .genericPassword: return "application password"
        case .internetPassword: return "Internet password"
        case .certificate: return "certificate"
        case .key:
            switch item.attributes[.keyClass] {
            case .number(0)?: return "public key"
            case .number(1)?: return "private key"
            default: return "symmetric key"
            }
        }
    }

    /// Apple's four-character protocol codes (`kSecAttrProtocol`) and the URL schemes they are.
    static let schemes = ["htps": "https", "http": "http", "ftp ": "ftp", "ftps": "ftps", "ssh ": "ssh", "imap": "imap", "smtp": "smtp",
                          "pop3": "pop3", "ldap": "ldap", "ldps": "ldaps", "sftp": "sftp"]

    /// `scheme://server:port/path`, with Apple's four-character protocol codes read as schemes.
    static func url(scheme: String?, server: String?, port: AttributeValue?, path: String?) -> String {
        guard let server else { return "" }
        var url = scheme.map { (Self.schemes[$0] ?? String($0.filter { $0 != " " })) + "://" } ?? ""
        url += server
        if case .number(let number)? = port, number > 0 { url += ":\(number)" }
        if let path { url += path.hasPrefix("/") ? path : "/" + path }
        return url
    }
}
