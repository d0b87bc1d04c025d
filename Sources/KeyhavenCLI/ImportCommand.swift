import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// `import`: security(1)'s. Reads what `SecItemImport` reads (PKCS#12 files, certificates, keys,
/// PEM sequences, encrypted keys) and adds it to a keychain; a failed import adds nothing.
struct ImportItems: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import certificates, keys and identities into a keychain.",
        discussion: "Formats (-f): pkcs12 (.p12, .pfx), x509 (one DER certificate), openssl (SEC1, PKCS#1 or SubjectPublicKeyInfo keys), "
            + "bsafe (PKCS#8 or PKCS#1 keys), pkcs8 (encrypted PKCS#8), pemseq (PEM certificates and keys, encrypted ones included). "
            + "Without -f the format follows from the file's contents. A passphrase is asked for when the file needs one.").underKeyhaven
    @Argument(help: "The file to import.") var file: String
    @Option(name: .customShort("k"), help: "The keychain to import into (default: the default keychain).") var keychain: String?
    @Option(name: .customShort("t"), help: "What the file holds: cert, pub, priv or agg (a hint).") var type: String?
    @Option(name: .customShort("f"), help: "The format: pkcs12, x509, openssl, bsafe, pkcs8 or pemseq.") var format: String?
    @Flag(name: .customShort("w"), help: "The private keys are wrapped (encrypted).") var wrapped = false
    @Option(name: .customShort("P"), help: "The passphrase (- reads it from standard input; without it, asked for when needed).")
    var passphrase: String?
    @Flag(name: .customShort("x"), help: "Make imported private keys non-extractable.") var nonExtractable = false

    func validate() throws {
        if let type, !["cert", "pub", "priv", "session", "agg"].contains(type) {
            throw ValidationError("unknown type \(type): cert, pub, priv or agg")
        }
        if let format, ExternalFormatName.format(format, wrapped: wrapped) == nil {
            throw ValidationError("unknown format \(format): pkcs12, x509, openssl, bsafe, pkcs8 or pemseq")
        }
    }

    func run() throws {
        try perform("SecKeychainItemImport") { () throws(StoreError) in
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw StoreError(.invalidParameter, "cannot read \(file)")
            }
            let session = try Session.open()
            let path = try session.path(keychain)
            let decoded = try decode(Array(bytes))
            var added = ImportedCount()
            try KeychainAddition(session: session, path: path, extractable: !nonExtractable).add(decoded.items, counting: &added)
            for line in added.lines { printLine(line) }
        }
    }

    /// The file's items: read with -P's passphrase, or, when the file turns out to need one and
    /// none was given, with one asked for.
    private func decode(_ bytes: [UInt8]) throws(StoreError) -> ExternalItemDecoder.Decoded {
        let requested = format.flatMap { ExternalFormatName.format($0, wrapped: wrapped) } ?? .unknown
        var secret = try PasswordInput.resolve(passphrase, prompt: "passphrase for \(file): ")
        defer { if secret != nil { zeroize(&secret!) } }
        do throws(ImportExportError) {
            return try ExternalItemDecoder.decode(bytes, format: requested, passphrase: secret)
        } catch where error.code == .passphraseRequired && secret == nil {
            secret = try PasswordInput.read(prompt: "passphrase for \(file): ")
        } catch {
            throw error.storeError
        }
        do throws(ImportExportError) {
            return try ExternalItemDecoder.decode(bytes, format: requested, passphrase: secret)
        } catch {
            throw error.storeError
        }
    }
}

/// How many of each kind an import added, in security(1)'s words.
struct ImportedCount {
    var identities = 0, keys = 0, certificates = 0

    var lines: [String] {
        [(identities, "identity", "identities"), (keys, "key", "keys"), (certificates, "certificate", "certificates")]
            .compactMap { count, one, many in count == 0 ? nil : "\(count) \(count == 1 ? one : many) imported." }
    }
}

/// security(1)'s format names for `-f`.
enum ExternalFormatName {
    static func format(_ name: String, wrapped: Bool) -> ExternalFormat? {
        switch (name, wrapped) {
        case ("pkcs12", false): return .pkcs12
        case ("x509", false): return .x509Cert
        case ("pemseq", false): return .pemSequence
        case ("pkcs8", _): return .wrappedPKCS8
        case ("openssl", false): return .openSSL
        case ("openssl", true): return .wrappedOpenSSL
        case ("bsafe", false): return .bsafe
        default: return nil
        }
    }
}
