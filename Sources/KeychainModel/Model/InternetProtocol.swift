/// URL schemes and the `kSecAttrProtocol` codes Apple stores for them (`SecProtocolType`'s
/// four characters), for what turns URLs into internet passwords: git's credential helper and
/// the password importers.
package enum InternetProtocol {
    package static func code(forScheme scheme: String) -> String? { codes[scheme.lowercased()] }

    /// The port a URL of `scheme` means when it names none (RFC 3986's scheme-defined port).
    package static func defaultPort(forScheme scheme: String) -> UInt16? { defaultPorts[scheme.lowercased()] }

    private static let defaultPorts: [String: UInt16] = [
        "https": 443, "http": 80, "ftp": 21, "ftps": 990, "smtp": 25, "imap": 143, "imaps": 993,
        "ssh": 22, "ldap": 389, "ldaps": 636, "pop3": 110, "pop3s": 995, "socks": 1080,
    ]

    private static let codes: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "smtp": "smtp", "imap": "imap", "imaps": "imps",
        "ssh": "ssh ", "ldap": "ldap", "ldaps": "ldps", "pop3": "pop3", "pop3s": "pops", "socks": "sox ",
    ]
}
