import Foundation
import KeychainKeys
import KeychainModel

/// Writes certificates, keys and identities in an external format (macOS's `SecItemExport`).
///
/// `secItemOrArray` is a `SecCertificate`, `SecKey` or `SecIdentity`, or an array of them. With
/// `.formatUnknown` one certificate is DER X.509, one key OpenSSL's format (SEC1 or PKCS#1 for a
/// private key, SubjectPublicKeyInfo for a public key), and anything else a PEM sequence (an
/// identity is its certificate, then its key). `.formatWrappedPKCS8`, `.formatWrappedOpenSSL` and
/// `.formatPKCS12` need `keyParams`'s passphrase (errSecPassphraseRequired); in a PEM sequence a
/// passphrase wraps private keys as encrypted PKCS#8. `.pemArmour` makes DER formats PEM text.
///
/// A private key stored as not extractable is errSecDataNotAvailable, whatever the format (a key
/// the agent holds is exported by the agent, when it may be). Formats Keyhaven does not write
/// (OpenSSH, raw keys, PKCS#7) are errSecUnsupportedFormat; a format that does not fit the items
/// (a public key as PKCS#12, two items as X.509) errSecUnsupportedFormat or errSecParam.
@discardableResult
public func SecItemExport(_ secItemOrArray: CFTypeRef, _ outputFormat: SecExternalFormat, _ flags: SecItemImportExportFlags,
                          _ keyParams: UnsafePointer<SecItemImportExportKeyParameters>?,
                          _ exportedData: UnsafeMutablePointer<CFData?>) -> OSStatus {
    let parameters = keyParams?.pointee ?? SecItemImportExportKeyParameters()
    var passphrase = parameters.passphraseBytes
    defer { if passphrase != nil { zeroize(&passphrase!) } }
    let objects: [AnyObject] = (secItemOrArray as? [AnyObject]) ?? [secItemOrArray]
    do {
        let items = try objects.map(ExportedItem.item(of:))
        let format = ExternalFormat(rawValue: outputFormat.rawValue) ?? .unknown
        var bytes = try ExternalItemEncoder.encode(items, format: format, pemArmour: flags.contains(.pemArmour), passphrase: passphrase)
        defer { zeroize(&bytes) }
        exportedData.pointee = NSData(bytes: bytes, length: bytes.count)
        return errSecSuccess
    } catch let error as ImportExportError {
        return error.osStatus
    } catch let error as KeyError {
        return error.code == .notExtractable ? errSecDataNotAvailable : error.osStatus
    } catch {
        return errSecParam
    }
}

/// One object of `SecItemExport`'s input, with its key material where it is a private key.
enum ExportedItem {
    static func item(of object: AnyObject) throws -> ExternalItem {
        if let certificate = object as? SecCertificate { return .certificate(certificate.info) }
        if let key = object as? SecKey { return .key(try material(key)) }
        if let identity = object as? SecIdentity {
            return .identity(PKCS12Identity(privateKey: try material(identity.privateKey), certificate: identity.certificate.info))
        }
        throw ImportExportError(.invalidParameter, "only certificates, keys and identities are exported")
    }

    /// The key itself: a public key, or a private key's material (from the agent when it holds it).
    private static func material(_ key: SecKey) throws -> AsymmetricKey {
        guard key.isPrivate else { return key.publicKey }
        var bytes = try KeyOperations.externalRepresentation(key)
        defer { zeroize(&bytes) }
        return try AsymmetricKey(externalRepresentation: bytes, keyType: key.kind.appleKeyType, isPrivate: true)
    }
}
