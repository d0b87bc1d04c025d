import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

/// Reads certificates and keys from their external representations, as macOS's `SecItemImport`
/// does: PEM (any sequence of certificates and keys, encrypted keys included), DER certificates,
/// PKCS#8, SEC1 and PKCS#1 private keys, SubjectPublicKeyInfo and PKCS#1 public keys, encrypted
/// PKCS#8, and PKCS#12 files.
package enum ExternalItemDecoder {
    /// What was read, and the format and item type it was found to be.
    package struct Decoded: Sendable {
        package var items: [ExternalItem]
        package var format: ExternalFormat
        package var itemType: ExternalItemType
    }

    /// The largest input read: far above any real certificate bundle or PKCS#12 file.
    static let maximumSize = 16 << 20

    /// Reads `bytes`. `format` (unless `.unknown`) is what the caller says the data is: anything
    /// else is errSecUnknownFormat. The contents decide (a file name
    /// is accepted for Apple's signature and not needed: every supported format is recognised by
    /// its contents). `passphrase` opens encrypted keys and PKCS#12 files.
    package static func decode(_ bytes: [UInt8], format: ExternalFormat,
                               passphrase: [UInt8]?) throws(ImportExportError) -> Decoded {
        guard format.isSupported else { throw ImportExportError(.unsupportedFormat, "format \(format) is not supported") }
        guard !bytes.isEmpty, bytes.count <= maximumSize else { throw ImportExportError(.unknownFormat, "the data is empty or too large") }
        let isPKCS12 = !PEMBlock.isPEM(bytes) && PKCS12.isPKCS12(bytes)
        if format == .pkcs12, !isPKCS12 { throw ImportExportError(.unknownFormat, "the data is not a PKCS#12 file") }
        let decoded: Decoded
        if isPKCS12 && (format == .unknown || format == .pkcs12) {
            decoded = try pkcs12(bytes, passphrase: passphrase)
        } else if PEMBlock.isPEM(bytes) {
            decoded = try pem(String(decoding: bytes, as: UTF8.self), passphrase: passphrase)
        } else {
            decoded = try der(bytes, passphrase: passphrase)
        }
        guard format == .unknown || accepts(format, decoded.format) else {
            throw ImportExportError(.unknownFormat, "the data is not in format \(format)")
        }
        return decoded
    }

    /// Whether data found to be `found` satisfies a caller who said `requested`.
    static func accepts(_ requested: ExternalFormat, _ found: ExternalFormat) -> Bool {
        switch requested {
        case .pemSequence: return true
        case .openSSL, .bsafe: return found == .openSSL || found == .bsafe
        default: return requested == found
        }
    }

    private static func pkcs12(_ bytes: [UInt8], passphrase: [UInt8]?) throws(ImportExportError) -> Decoded {
        guard let passphrase else { throw ImportExportError(.passphraseRequired, "a PKCS#12 file needs a passphrase") }
        do throws(PKCS12Failure) {
            let contents = try PKCS12.readAll(bytes, passphrase: String(decoding: passphrase, as: UTF8.self))
            let items = contents.identities.map { ExternalItem.identity($0) } + contents.certificates.map { .certificate($0) }
                + contents.keys.map { .key($0) }
            guard !items.isEmpty else { throw PKCS12Failure.malformed("the PKCS#12 file is empty") }
            return Decoded(items: items, format: .pkcs12, itemType: .aggregate)
        } catch .wrongPassphrase {
            throw ImportExportError(.pkcs12WrongPassphrase, "the passphrase does not verify the PKCS#12 file")
        } catch {
            throw ImportExportError(.malformed, "the PKCS#12 file could not be read")
        }
    }

    private static func pem(_ text: String, passphrase: [UInt8]?) throws(ImportExportError) -> Decoded {
        var items: [ExternalItem] = []
        var formats: [ExternalFormat] = []
        for block in PEMBlock.blocks(in: text) {
            guard let (item, format) = try item(of: block, passphrase: passphrase) else { continue }
            items.append(item)
            formats.append(format)
        }
        guard !items.isEmpty else { throw ImportExportError(.unknownFormat, "the PEM text holds no certificate or key") }
        if items.count == 1, let format = formats.first { return Decoded(items: items, format: format, itemType: items[0].itemType) }
        return Decoded(items: items, format: .pemSequence, itemType: .aggregate)
    }

    /// The item in one PEM block; nil for a block of another kind (parameters, requests...).
    private static func item(of block: PEMBlock, passphrase: [UInt8]?) throws(ImportExportError) -> (ExternalItem, ExternalFormat)? {
        if block.hasHeaders {
            guard block.label.hasSuffix("PRIVATE KEY") else { return nil }
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "an encrypted private key needs a passphrase") }
            return (.key(try OpenSSLKey.decryptTraditionalPEM(Array(block.text.utf8), passphrase: passphrase)), .wrappedOpenSSL)
        }
        guard var der = block.der else {
            throw ImportExportError(.malformed, "a PEM block (\(block.label)) is not base64")
        }
        defer { zeroize(&der) }
        switch block.label {
        case "CERTIFICATE", "X509 CERTIFICATE":
            guard let certificate = CertificateInfo(der: der) else { throw ImportExportError(.malformed, "a PEM certificate does not parse") }
            return (.certificate(certificate), .x509Cert)
        case "PRIVATE KEY":
            return (.key(try privateKey(der)), .bsafe)
        case "EC PRIVATE KEY", "RSA PRIVATE KEY":
            return (.key(try privateKey(der)), .openSSL)
        case "ENCRYPTED PRIVATE KEY":
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "an encrypted private key needs a passphrase") }
            return (.key(try OpenSSLKey.decryptPKCS8(der, passphrase: passphrase)), .wrappedPKCS8)
        case "PUBLIC KEY":
            return (.key(try publicKey(der)), .openSSL)
        case "RSA PUBLIC KEY":
            return (.key(try publicKey(der)), .bsafe)
        default:
            return nil
        }
    }

    /// One DER object: a certificate, a private key, a public key or an encrypted private key.
    private static func der(_ bytes: [UInt8], passphrase: [UInt8]?) throws(ImportExportError) -> Decoded {
        if let certificate = CertificateInfo(der: bytes) { return Decoded(items: [.certificate(certificate)], format: .x509Cert, itemType: .certificate) }
        if let key = try? OpenSSLKey.privateKey(der: bytes) {
            return Decoded(items: [.key(key)], format: .openSSL, itemType: .privateKey)
        }
        if let key = try? publicKey(bytes) { return Decoded(items: [.key(key)], format: .openSSL, itemType: .publicKey) }
        if OpenSSLKey.isEncryptedPKCS8(bytes) {
            guard let passphrase else { throw ImportExportError(.passphraseRequired, "an encrypted private key needs a passphrase") }
            let key = try OpenSSLKey.decryptPKCS8(bytes, passphrase: passphrase)
            return Decoded(items: [.key(key)], format: .wrappedPKCS8, itemType: .privateKey)
        }
        throw ImportExportError(.unknownFormat, "the data is not a certificate, a key or a PKCS#12 file")
    }

    private static func privateKey(_ der: [UInt8]) throws(ImportExportError) -> AsymmetricKey {
        do {
            return try OpenSSLKey.privateKey(der: der)
        } catch {
            throw ImportExportError(.malformed, "a private key is not an EC (P-256, P-384, P-521) or RSA key of 1024 bits or more")
        }
    }

    /// A public key from SubjectPublicKeyInfo (EC or RSA) or PKCS#1 `RSAPublicKey` DER.
    static func publicKey(_ der: [UInt8]) throws(ImportExportError) -> AsymmetricKey {
        if let ec = try? P256.Signing.PublicKey(derRepresentation: der) { return .ecPublic(.p256(ec)) }
        if let ec = try? P384.Signing.PublicKey(derRepresentation: der) { return .ecPublic(.p384(ec)) }
        if let ec = try? P521.Signing.PublicKey(derRepresentation: der) { return .ecPublic(.p521(ec)) }
        if let rsa = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: der), rsa.keySizeInBits >= 1024 { return .rsaPublic(rsa) }
        throw ImportExportError(.malformed, "a public key is not an EC (P-256, P-384, P-521) or RSA key of 1024 bits or more")
    }
}
