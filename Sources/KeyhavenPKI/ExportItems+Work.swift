import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

/// `export`'s work, over what `SecItemExport` writes. Keys stored as not extractable are never exported.
extension ExportItems: HelperWork {
    package func work() throws {
        try perform("SecKeychainItemExport") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            let items = try ExportSelection(session: session, path: path).items(type)
            guard !items.isEmpty else { throw StoreError(.itemNotFound, "nothing of type \(type) to export") }
            let requested = format.flatMap { ExternalFormatName.format($0, wrapped: wrapped) } ?? .unknown
            let needsPassphrase = [.pkcs12, .wrappedPKCS8, .wrappedOpenSSL].contains(requested)
            var secret = needsPassphrase ? try PasswordInput.resolveOrAsk(passphrase, prompt: "passphrase for the export: ")
                                         : try PasswordInput.resolve(passphrase, prompt: "passphrase for the export: ")
            defer { if secret != nil { zeroize(&secret!) } }
            if needsPassphrase, secret?.isEmpty != false {
                throw StoreError(.passphraseRequired, "the export needs a passphrase: an empty one protects nothing")
            }
            var bytes: [UInt8]
            do throws(ImportExportError) {
                bytes = try ExternalItemEncoder.encode(items, format: requested, pemArmour: pem, passphrase: secret)
            } catch {
                throw error.storeError
            }
            defer { zeroize(&bytes) }
            guard let output else {
                writeStandardOutput(bytes)
                return
            }
            guard try FileSecurity.createExclusively(output, bytes: bytes) else {
                throw StoreError(.duplicateItem, "\(output) exists")
            }
        }
    }
}

/// The items of a keychain that an export's `-t` names.
struct ExportSelection {
    let session: Session
    let path: String

    func items(_ type: String) throws(StoreError) -> [ExternalItem] {
        switch type {
        case "certs": return try certificates().map { .certificate($0) }
        case "allKeys": return try keys(privateKeys: true) + keys(privateKeys: false)
        case "pubKeys": return try keys(privateKeys: false)
        case "privKeys": return try keys(privateKeys: true)
        case "identities": return try identities()
        default: return try certificates().map { .certificate($0) } + keys(privateKeys: true) + keys(privateKeys: false)
        }
    }

    private func certificates() throws(StoreError) -> [CertificateInfo] {
        try CertificateWork.certificates([path], session: session).map(\.info)
    }

    /// The keychain's private keys the agent gives out (the extractable ones), or its public keys.
    private func keys(privateKeys: Bool) throws(StoreError) -> [ExternalItem] {
        var query = ItemQuery(itemClass: .key)
        query.criteria[.keyClass] = .number(privateKeys ? 1 : 0)
        query.limit = nil
        query.matchAnySynchronizable = true
        return try session.items(matching: query, in: path, withSecrets: true).compactMap { $0.secret == nil ? nil : (try? StoredKeyOperation.storedKey($0)).map { .key($0) } }
    }

    /// Each certificate whose private key is here and extractable, as an identity.
    private func identities() throws(StoreError) -> [ExternalItem] {
        let privateKeys = try keys(privateKeys: true).compactMap { item -> AsymmetricKey? in
            if case .key(let key) = item { return key }
            return nil
        }
        return try certificates().compactMap { certificate in
            privateKeys.first { $0.publicBytes == certificate.publicKey?.publicBytes }
                .map { .identity(PKCS12Identity(privateKey: $0, certificate: certificate)) }
        }
    }
}
