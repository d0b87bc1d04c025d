import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// `export`: security(1)'s, for certificates (PEM), private keys (PKCS#8 PEM) and an identity
/// (PKCS#12 with OpenSSL 3's defaults). Keys stored as not extractable are never exported.
struct ExportItems: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export certificates, private keys or an identity from a keychain.",
        discussion: "-t certs -f pemseq: every certificate, PEM. -t allKeys -f pemseq: every extractable private key, PKCS#8 PEM. "
            + "-t identities -f pkcs12: the identity (one) with its keychain's other certificates, protected by -P. "
            + "The file is written 0600.").underKeyhaven
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") var keychain: String?
    @Option(name: .customShort("t"), help: "What to export: certs, allKeys or identities.") var type: String
    @Option(name: .customShort("f"), help: "The format: pemseq or pkcs12.") var format: String
    @Option(name: .customShort("P"), help: "The PKCS#12 passphrase (- reads it from standard input; without it, asked for).")
    var passphrase: String?
    @Option(name: .customShort("o"), help: "The file to write (it must not exist).") var output: String

    func validate() throws {
        switch (type, format) {
        case ("certs", "pemseq"), ("allKeys", "pemseq"), ("identities", "pkcs12"): break
        default: throw ValidationError("supported: -t certs -f pemseq, -t allKeys -f pemseq, -t identities -f pkcs12")
        }
    }

    func run() throws {
        try perform("SecKeychainItemExport") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            var bytes: [UInt8]
            switch type {
            case "certs":
                let certificates = try CertificateWork.certificates([path], session: session)
                guard !certificates.isEmpty else { throw StoreError(.itemNotFound, "no certificate to export") }
                bytes = Array((certificates.map { CertificateWork.pem($0.info.der) }.joined(separator: "\n") + "\n").utf8)
            case "allKeys":
                let keys = try privateKeys(path, session: session)
                guard !keys.isEmpty else { throw StoreError(.itemNotFound, "no extractable private key to export") }
                bytes = Array(keys.map(\.pkcs8PEM).joined().utf8)
            default:
                bytes = try identityFile(path, session: session)
            }
            defer { zeroize(&bytes) }
            guard try FileSecurity.createExclusively(output, bytes: bytes) else {
                throw StoreError(.duplicateItem, "\(output) exists")
            }
        }
    }

    /// Every private key of the keychain the agent gives out (the extractable ones).
    private func privateKeys(_ path: String, session: Session) throws(StoreError) -> [AsymmetricKey] {
        var query = ItemQuery(itemClass: .key)
        query.criteria["kcls"] = .number(1)
        query.limit = nil
        query.matchAnySynchronizable = true
        let items: [StoredItem]
        do throws(StoreError) {
            items = try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: true)).items ?? []
        } catch where error.code == .itemNotFound {
            return []
        }
        return items.compactMap { $0.secret == nil ? nil : try? StoredKeyOperation.storedKey($0) }
    }

    private func identityFile(_ path: String, session: Session) throws(StoreError) -> [UInt8] {
        let identities = try CertificateWork.identities([path], session: session)
        guard let identity = identities.first else { throw StoreError(.itemNotFound, "no identity to export") }
        guard identities.count == 1 else { throw StoreError(.invalidParameter, "\(identities.count) identities: a file holds one here") }
        guard let key = try privateKeys(path, session: session).first(where: { $0.applicationLabel == identity.info.publicKeyHash })
        else { throw StoreError(.invalidParameter, "the identity's private key is not extractable") }
        let chain = try CertificateWork.certificates([path], session: session).filter { $0.info.der != identity.info.der }.map(\.info)
        var secret = try PasswordInput.resolveOrAsk(passphrase, prompt: "passphrase for \(output): ")
        defer { zeroize(&secret) }
        do throws(PKCS12Failure) {
            return try PKCS12.write(privateKey: key, certificate: identity.info, chain: chain, label: identity.info.subjectSummary,
                                    passphrase: String(decoding: secret, as: UTF8.self))
        } catch {
            throw StoreError(.invalidParameter, "the PKCS#12 file could not be made")
        }
    }
}
