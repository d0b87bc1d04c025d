import Foundation
import KeychainModel
import SwiftCSV

/// One password from another store's CSV export, and the keychain item it becomes.
struct ExportedPassword: Equatable {
    var title: String
    var url: String
    var username: String
    var password: String
    var notes: String

    /// The known exports' column names (lowercased), in order of preference.
    private static let columns: [String: [String]] = [
        "title": ["name", "title"],
        "url": ["url", "login_uri", "website"],
        "username": ["username", "login_username", "user name", "login"],
        "password": ["password", "login_password"],
        "notes": ["note", "notes", "extra"],
    ]

    /// Reads a CSV export: Chromium (`name,url,username,password,note`), Firefox
    /// (`url,username,password,httpRealm,...`), Bitwarden (`folder,favorite,type,name,notes,fields,
    /// reprompt,login_uri,login_username,login_password,login_totp`), 1Password (`Title,Url,Username,
    /// Password,...`), KeePassXC (`Group,Title,Username,Password,URL,Notes,...`). Rows without a
    /// password are left out (Bitwarden's notes, cards).
    static func read(csv text: String) throws(StoreError) -> [ExportedPassword] {
        let parsed: CSV<Named>
        do {
            parsed = try CSV<Named>(string: text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text, delimiter: .comma, loadColumns: false)
        } catch {
            // Not the parser's message: it quotes the file's text, which holds passwords.
            throw StoreError(.unknownFormat, "the file is not CSV (a quotation mark out of place)")
        }
        let header = Dictionary(parsed.header.map { ($0.trimmingCharacters(in: .whitespaces).lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        func column(_ field: String) -> String? { columns[field]!.lazy.compactMap { header[$0] }.first }
        guard let passwordColumn = column("password"), column("url") != nil || column("title") != nil else {
            throw StoreError(.unknownFormat, "the CSV's header names no password and URL or title column (\(parsed.header.joined(separator: ",")))")
        }
        return parsed.rows.compactMap { row in
            guard let password = row[passwordColumn], !password.isEmpty else { return nil }
            return ExportedPassword(title: column("title").flatMap { row[$0] } ?? "", url: column("url").flatMap { row[$0] } ?? "",
                                    username: column("username").flatMap { row[$0] } ?? "", password: password,
                                    notes: column("notes").flatMap { row[$0] } ?? "")
        }
    }

    /// An internet password when the URL has a host (Safari's passwords on a Mac), else a
    /// generic password whose service is the title.
    var item: NewItem? {
        var attributes: [String: AttributeValue] = .named([.account: .string(username)])
        if !notes.isEmpty { attributes[.comment] = .string(notes) }
        if let components = URLComponents(string: url.trimmingCharacters(in: .whitespaces)), let host = components.host, !host.isEmpty {
            attributes[.server] = .string(host)
            if let scheme = components.scheme, let code = InternetProtocol.code(forScheme: scheme) { attributes[.protocol] = .string(code) }
            if let port = components.port, (1...65535).contains(port) { attributes[.port] = .number(Int64(port)) }
            if !components.path.isEmpty, components.path != "/" { attributes[.path] = .string(components.path) }
            attributes[.label] = .string(title.isEmpty ? host : title)
            return NewItem(itemClass: .internetPassword, attributes: attributes, secret: Data(password.utf8), access: .creatorOnly)
        }
        guard !title.isEmpty else { return nil }
        attributes[.service] = .string(title)
        attributes[.label] = .string(title)
        return NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data(password.utf8), access: .creatorOnly)
    }
}
