import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// The options naming one certificate: by common name or by SHA-1 hash, as security(1).
struct CertificateSelection: ParsableArguments {
    @Option(name: .customShort("c"), help: "The certificate's common name (it must name one certificate).") var name: String?
    @Option(name: .customShort("Z"), help: "The certificate's SHA-1 hash (40 hex digits).") var hash: String?
    @Flag(name: .customShort("t"), help: "Also delete trust settings (Keyhaven keeps none; accepted for security(1)'s scripts).")
    var trustSettings = false
    @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

    func validate() throws {
        guard (name == nil) != (hash == nil) else { throw ValidationError("give -c NAME or -Z HASH") }
    }

    /// The one certificate selected, among `candidates`.
    func select(_ candidates: [CertificateWork.Found]) throws(StoreError) -> CertificateWork.Found {
        let matching = candidates.filter { found in
            if let hash { return found.sha1 == hash.uppercased() }
            return CertificateWork.matches(found, name: name, email: nil)
        }
        guard let first = matching.first else { throw StoreError(.itemNotFound, "no certificate matched") }
        guard matching.count == 1 else {
            throw StoreError(.invalidParameter, "\(matching.count) certificates match \(name ?? ""): name one with -Z")
        }
        return first
    }
}

enum CertificateDeletion {
    static func delete(_ certificate: CertificateWork.Found, session: Session) throws(StoreError) {
        var query = ItemQuery(itemClass: .certificate)
        query.persistentReference = certificate.item.persistentReference
        query.criteria["sync"] = certificate.item.attributes["sync"]
        try session.send(.delete(keychains: [certificate.keychain], query: query, caller: session.caller, makeTombstones: false))
    }
}

/// `delete-certificate`.
struct DeleteCertificate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-certificate", abstract: "Delete a certificate.").underKeyhaven
    @OptionGroup var selection: CertificateSelection

    func run() throws {
        try perform("SecKeychainItemDelete") { () throws(StoreError) in
            let session = try Session.open()
            let certificate = try selection.select(try CertificateWork.certificates(selection.keychains, session: session))
            try CertificateDeletion.delete(certificate, session: session)
            printLine("certificate has been deleted.")
        }
    }
}

/// `delete-identity`: the certificate and its private key (kept when another certificate uses it).
struct DeleteIdentity: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-identity",
                                                    abstract: "Delete an identity: its certificate and its private key.").underKeyhaven
    @OptionGroup var selection: CertificateSelection

    func run() throws {
        try perform("SecKeychainItemDelete") { () throws(StoreError) in
            let session = try Session.open()
            let identity = try selection.select(try CertificateWork.identities(selection.keychains, session: session))
            try CertificateDeletion.delete(identity, session: session)
            let others = try CertificateWork.certificates([identity.keychain], session: session)
            if !others.contains(where: { $0.info.publicKeyHash == identity.info.publicKeyHash }) {
                var key = ItemQuery(itemClass: .key)
                key.criteria = ["kcls": .number(1), "klbl": .data(identity.info.publicKeyHash)]
                key.matchAnySynchronizable = true
                try session.send(.delete(keychains: [identity.keychain], query: key, caller: session.caller, makeTombstones: false))
            }
            printLine("identity has been deleted.")
        }
    }
}
