import Crypto
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI
import KeyhavenAgentClient

/// The certificates and identities in the searched keychains, for the certificate subcommands.
enum CertificateWork {
    struct Found {
        let keychain: String
        let item: StoredItem
        let info: CertificateInfo

        var sha1: String { hex(Insecure.SHA1.hash(data: info.der)) }
        var sha256: String { hex(SHA256.hash(data: info.der)) }
    }

    /// Every certificate item (with its DER) in `keychains` (default: the search list).
    static func certificates(_ keychains: [String], session: Session) throws(StoreError) -> [Found] {
        var query = ItemQuery(itemClass: .certificate)
        query.limit = nil
        query.matchAnySynchronizable = true
        let found: [(keychain: any KeychainBackend, item: StoredItem)]
        do throws(StoreError) {
            found = try KeychainSearch.find(query, in: session.keychains(try session.searchPaths(keychains)), caller: session.caller,
                                            withSecrets: true)
        } catch where error.code == .itemNotFound {
            return []
        }
        return found.compactMap { pair in
            pair.item.secret.flatMap { CertificateInfo(der: Array($0)) }.map { Found(keychain: pair.keychain.path, item: pair.item, info: $0) }
        }
    }

    /// The certificates that have a private key (the identities), in the same keychain.
    static func identities(_ keychains: [String], session: Session) throws(StoreError) -> [Found] {
        let certificates = try certificates(keychains, session: session)
        var keys = ItemQuery(itemClass: .key)
        keys.limit = nil
        keys.matchAnySynchronizable = true
        keys.criteria[.keyClass] = .number(1)
        var labels: Set<String> = []
        for path in Set(certificates.map(\.keychain)) {
            for key in try session.items(matching: keys, in: path, withSecrets: false) { if case .data(let label)? = key.attributes[.applicationLabel] { labels.insert(path + "\u{0}" + hex(label)) } }
        }
        return certificates.filter { labels.contains($0.keychain + "\u{0}" + hex($0.info.publicKeyHash)) }
    }

    /// security(1)'s `-c`: the name is part of the subject's common name (or the label).
    static func matches(_ found: Found, name: String?, email: String?) -> Bool {
        if let name, !(found.info.commonNames + [found.info.subjectSummary ?? ""]).contains(where: { $0.contains(name) }) { return false }
        if let email, !found.info.emailAddresses.contains(where: { $0.lowercased() == email.lowercased() }) { return false }
        return true
    }

    /// PEM text of a DER certificate, 64 columns, as security(1) and OpenSSL write it.
    static func pem(_ der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let next = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<next]))
            index = next
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n")
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
