/// URL schemes and the `kSecAttrProtocol` codes Apple stores for them (`SecProtocolType`'s
/// four characters), for what turns URLs into internet passwords: git's credential helper and
/// the password importers.
package enum InternetProtocol {
    package static func code(forScheme scheme: String) -> String? { codes[scheme.lowercased()] }

    private static let codes: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "smtp": "smtp", "imap": "imap", "imaps": "imps",
        "ssh": "ssh ", "ldap": "ldap", "ldaps": "ldps", "pop3": "pop3", "pop3s": "pops", "socks": "sox ",
    ]
}
