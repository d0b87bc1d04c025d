import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

/// `import`'s work: what `SecItemImport` reads (PKCS#12 files, certificates, keys, PEM sequences,
/// encrypted keys), added to a keychain; a failed import adds nothing.
extension ImportItems: HelperWork {
    package func work() throws {
        try perform("SecKeychainItemImport") { () throws(StoreError) in
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw StoreError(.invalidParameter, "cannot read \(file)")
            }
            let session = try Session.open()
            let path = try session.path(keychain)
            let decoded = try decode(Array(bytes))
            var added = ImportedCount()
            try KeychainAddition(session: session, path: path, extractable: !nonExtractable, access: access.itemAccess,
                                 accessGroup: accessGroup).add(decoded.items, counting: &added)
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

/// security(1)'s format names for `-f`, as formats.
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
