import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

extension CertificateSelection {
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
        query.criteria[.synchronizable] = certificate.item.attributes[.synchronizable]
        try session.send(.delete(keychains: [certificate.keychain], query: query, caller: session.caller, makeTombstones: false))
    }
}

extension DeleteCertificate: HelperWork {
    package func work() throws {
        try perform("SecKeychainItemDelete") { () throws(StoreError) in
            let session = try Session.open()
            let certificate = try selection.select(try CertificateWork.certificates(selection.keychains, session: session))
            try CertificateDeletion.delete(certificate, session: session)
            printLine("certificate has been deleted.")
        }
    }
}

extension DeleteIdentity: HelperWork {
    package func work() throws {
        try perform("SecKeychainItemDelete") { () throws(StoreError) in
            let session = try Session.open()
            let identity = try selection.select(try CertificateWork.identities(selection.keychains, session: session))
            try CertificateDeletion.delete(identity, session: session)
            let others = try CertificateWork.certificates([identity.keychain], session: session)
            if !others.contains(where: { $0.info.publicKeyHash == identity.info.publicKeyHash }) {
                var key = ItemQuery(itemClass: .key)
                key.criteria = .named([.keyClass: .number(1), .applicationLabel: .data(identity.info.publicKeyHash)])
                key.matchAnySynchronizable = true
                try session.send(.delete(keychains: [identity.keychain], query: key, caller: session.caller, makeTombstones: false))
            }
            printLine("identity has been deleted.")
        }
    }
}
