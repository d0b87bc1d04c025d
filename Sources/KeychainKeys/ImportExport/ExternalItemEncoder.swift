import FoundationEssentials
import KeychainModel

/// Writes certificates, keys and identities in an external format, as macOS's `SecItemExport`
/// does. The caller has already refused keys that may not leave the keychain.
package enum ExternalItemEncoder {
    /// `items` in `format` (`.unknown`: X.509 DER for one certificate, OpenSSL's format for one
    /// key, a PEM sequence for anything else); PEM text when `pemArmour` or when the format is
    /// PEM by nature. Wrapped formats and PKCS#12 need `passphrase`.
    package static func encode(_ items: [ExternalItem], format: ExternalFormat, pemArmour: Bool,
                               passphrase: [UInt8]?) throws(ImportExportError) -> [UInt8] {
        guard !items.isEmpty else { throw ImportExportError(.invalidParameter, "nothing to export") }
        guard format.isSupported else { throw ImportExportError(.unsupportedFormat, "format \(format) is not supported") }
        let resolved = format == .unknown ? defaultFormat(items) : format
        switch resolved {
        case .pemSequence:
            var text: [UInt8] = []
            for item in items.flatMap(\.parts) { text += try pemText(of: item, passphrase: passphrase) }
            return text
        case .pkcs12:
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "a PKCS#12 file needs a passphrase") }
            return try PKCS12.write(items.flatMap(\.parts), passphrase: String(decoding: passphrase, as: UTF8.self))
        default:
            let parts = items.flatMap(\.parts)
            guard parts.count == 1, let item = parts.first else {
                throw ImportExportError(.invalidParameter, "format \(resolved) holds one item, not \(parts.count)")
            }
            let (label, der) = try encoding(of: item, in: resolved, passphrase: passphrase)
            if resolved == .wrappedOpenSSL { return der }   // PEM already
            return pemArmour ? Array(PEMBlock.text(label: label, der: der).utf8) : der
        }
    }

    /// Apple's defaults: X.509 for one certificate, OpenSSL for one key, else a PEM sequence.
    static func defaultFormat(_ items: [ExternalItem]) -> ExternalFormat {
        guard items.count == 1, let item = items.first else { return .pemSequence }
        switch item {
        case .certificate: return .x509Cert
        case .key: return .openSSL
        case .identity: return .pemSequence
        }
    }

    /// One item as PEM text in a sequence: certificates as X.509, keys in OpenSSL's format, or
    /// encrypted PKCS#8 when a passphrase is given.
    private static func pemText(of item: ExternalItem, passphrase: [UInt8]?) throws(ImportExportError) -> [UInt8] {
        let format: ExternalFormat
        switch item {
        case .key(let key) where key.isPrivate && passphrase != nil: format = .wrappedPKCS8
        case .key: format = .openSSL
        default: format = .x509Cert
        }
        var (label, der) = try encoding(of: item, in: format, passphrase: passphrase)
        defer { zeroize(&der) }
        return Array(PEMBlock.text(label: label, der: der).utf8)
    }

    /// The PEM label and DER of one certificate or key in `format` (for `.wrappedOpenSSL`, the
    /// PEM text itself).
    private static func encoding(of item: ExternalItem, in format: ExternalFormat,
                                 passphrase: [UInt8]?) throws(ImportExportError) -> (String, [UInt8]) {
        switch (item, format) {
        case (.certificate(let certificate), .x509Cert):
            return ("CERTIFICATE", certificate.der)
        case (.key(let key), .openSSL) where key.isPrivate:
            return (key.kind.isRSA ? "RSA PRIVATE KEY" : "EC PRIVATE KEY", try OpenSSLKey.traditionalDER(key))
        case (.key(let key), .openSSL):
            return ("PUBLIC KEY", key.subjectPublicKeyInfo)
        case (.key(let key), .bsafe) where !key.isPrivate && !key.kind.isRSA:
            return ("PUBLIC KEY", key.subjectPublicKeyInfo)
        case (.key(let key), .bsafe) where key.isPrivate:
            return ("PRIVATE KEY", try OpenSSLKey.pkcs8(key))
        case (.key(let key), .bsafe):
            return ("RSA PUBLIC KEY", Array(key.publicBytes))
        case (.key(let key), .wrappedPKCS8) where key.isPrivate:
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "a wrapped private key needs a passphrase") }
            return ("ENCRYPTED PRIVATE KEY", try OpenSSLKey.encryptedPKCS8(key, passphrase: passphrase))
        case (.key(let key), .wrappedOpenSSL) where key.isPrivate:
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "a wrapped private key needs a passphrase") }
            return ("", try OpenSSLKey.encryptedTraditionalPEM(key, passphrase: passphrase))
        default:
            throw ImportExportError(.unsupportedFormat, "format \(format) does not hold a \(item.itemType)")
        }
    }
}

extension ExternalItem {
    /// The certificates and keys this item is made of: an identity is its certificate and its
    /// private key.
    var parts: [ExternalItem] {
        guard case .identity(let identity) = self else { return [self] }
        return [.certificate(identity.certificate), .key(identity.privateKey)]
    }
}
