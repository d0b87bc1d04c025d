import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// `import`: security(1)'s, for PKCS#12 files (an identity: its certificate, its private key and
/// the file's other certificates) and certificates (DER or PEM, one or a sequence).
struct ImportItems: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import a PKCS#12 file or certificates into a keychain.",
        discussion: "Formats: pkcs12 (.p12, .pfx), x509 (one certificate, DER or PEM: .der, .cer, .crt), pemseq (PEM certificates). "
            + "Without -f the format follows from the file's extension, else its contents.").underKeyhaven
    @Argument(help: "The file to import.") var file: String
    @Option(name: .customShort("k"), help: "The keychain to import into (default: the default keychain).") var keychain: String?
    @Option(name: .customShort("f"), help: "The format: pkcs12, x509 or pemseq.") var format: String?
    @Option(name: .customShort("P"), help: "The PKCS#12 file's passphrase (- reads it from standard input; without it, asked for).")
    var passphrase: String?
    @Flag(name: .customShort("x"), help: "Make the imported private key non-extractable.") var nonExtractable = false

    func run() throws {
        try perform("SecKeychainItemImport") { () throws(StoreError) in
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw StoreError(.invalidParameter, "cannot read \(file)")
            }
            let session = try Session.open()
            let path = try session.path(keychain)
            switch try resolvedFormat(Array(bytes)) {
            case "pkcs12":
                var secret = try PasswordInput.resolveOrAsk(passphrase, prompt: "passphrase for \(file): ")
                defer { zeroize(&secret) }
                let identity: PKCS12Identity
                do throws(PKCS12Failure) {
                    identity = try PKCS12.read(Array(bytes), passphrase: String(decoding: secret, as: UTF8.self))
                } catch .wrongPassphrase {
                    throw StoreError(.authFailed, "the passphrase does not open \(file)")
                } catch {
                    throw StoreError(.decode, "\(file) is not a PKCS#12 file this can read")
                }
                try add(identity, to: path, session: session)
                printLine("1 identity imported.")
            default:
                let certificates = CertificateImport.certificates(in: Array(bytes))
                guard !certificates.isEmpty else { throw StoreError(.decode, "\(file) holds no certificate") }
                for certificate in certificates { try addCertificate(certificate, to: path, session: session) }
                printLine("\(certificates.count) certificate\(certificates.count == 1 ? "" : "s") imported.")
            }
        }
    }

    private func resolvedFormat(_ bytes: [UInt8]) throws(StoreError) -> String {
        if let format {
            guard ["pkcs12", "x509", "pemseq"].contains(format) else {
                throw StoreError(.invalidParameter, "unknown format \(format): pkcs12, x509 or pemseq")
            }
            return format
        }
        let lowered = file.lowercased()
        if lowered.hasSuffix(".p12") || lowered.hasSuffix(".pfx") { return "pkcs12" }
        if lowered.hasSuffix(".pem") || lowered.hasSuffix(".crt") || lowered.hasSuffix(".cer") || lowered.hasSuffix(".der") { return "x509" }
        return CertificateImport.certificates(in: bytes).isEmpty ? "pkcs12" : "x509"
    }

    private func add(_ identity: PKCS12Identity, to path: String, session: Session) throws(StoreError) {
        var keyAttributes = ItemAttributes.key(identity.privateKey.publicKey, isPrivate: true, isExtractable: !nonExtractable)
        if let label = identity.label { keyAttributes["labl"] = .string(label) }
        var material = identity.privateKey.withExternalRepresentation { $0 }
        defer { zeroize(&material) }
        let key = NewItem(itemClass: .key, attributes: keyAttributes, secret: Data(material))
        let certificateItem = NewItem(itemClass: .certificate, attributes: ItemAttributes.certificate(identity.certificate),
                                      secret: Data(identity.certificate.der))
        let certificateStatus = addOrKeep(certificateItem, to: path, session: session)
        if case .failure(let error) = certificateStatus { throw error }
        let keyStatus = addOrKeep(key, to: path, session: session)
        if case .failure(let error) = keyStatus {
            // A failed import changes nothing: take back the certificate it added.
            if case .success(true) = certificateStatus {
                var query = ItemQuery(itemClass: .certificate)
                query.criteria = certificateItem.attributes.filter { ItemClass.certificate.schema[$0.key]?.isPrimaryKey == true }
                _ = try? session.send(.delete(keychains: [path], query: query, caller: session.caller, makeTombstones: false))
            }
            throw error
        }
        if case .success(false) = certificateStatus, case .success(false) = keyStatus {
            throw StoreError(.duplicateItem, "the identity is already in the keychain")
        }
        for other in identity.chain { _ = addOrKeep(NewItem(itemClass: .certificate, attributes: ItemAttributes.certificate(other),
                                                            secret: Data(other.der)), to: path, session: session) }
    }

    private func addCertificate(_ certificate: CertificateInfo, to path: String, session: Session) throws(StoreError) {
        let item = NewItem(itemClass: .certificate, attributes: ItemAttributes.certificate(certificate), secret: Data(certificate.der))
        try session.send(.add(keychain: path, item: item, caller: session.caller))
    }

    /// Adds `item`; success(true) when added, success(false) when it was already there.
    private func addOrKeep(_ item: NewItem, to path: String, session: Session) -> Result<Bool, StoreError> {
        do {
            try session.send(.add(keychain: path, item: item, caller: session.caller))
            return .success(true)
        } catch where error.code == .duplicateItem {
            return .success(false)
        } catch {
            return .failure(error)
        }
    }
}

/// Certificates in a file: one DER certificate, or PEM CERTIFICATE blocks.
enum CertificateImport {
    static func certificates(in bytes: [UInt8]) -> [CertificateInfo] {
        if let der = CertificateInfo(der: bytes) { return [der] }
        let text = String(decoding: bytes, as: UTF8.self)
        var found: [CertificateInfo] = []
        var body: [Substring]?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = trim(line)
            if trimmed == "-----BEGIN CERTIFICATE-----" { body = [] } else if trimmed == "-----END CERTIFICATE-----" {
                if let lines = body, let der = Data(base64Encoded: lines.joined()), let info = CertificateInfo(der: Array(der)) {
                    found.append(info)
                }
                body = nil
            } else if body != nil {
                body?.append(Substring(trimmed))
            }
        }
        return found
    }

    private static func trim(_ line: Substring) -> String {
        var text = line
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}
