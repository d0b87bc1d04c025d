import Foundation
import KeychainKeys
import KeychainModel

/// Reads certificates, keys and identities from an external representation, and adds them to
/// `importKeychain` when one is given (macOS's `SecItemImport`).
///
/// Reads PEM (certificates, `PRIVATE KEY`, `EC PRIVATE KEY`, `RSA PRIVATE KEY`, their
/// traditional encrypted form, `ENCRYPTED PRIVATE KEY`, `PUBLIC KEY`, `RSA PUBLIC KEY`; other
/// blocks such as `EC PARAMETERS` are skipped), DER certificates, PKCS#8, SEC1 and PKCS#1 keys,
/// SubjectPublicKeyInfo, encrypted PKCS#8 and PKCS#12. `inputFormat` and `itemType`, when given,
/// receive what the data was found to be; a format other than `.formatUnknown` is what the data
/// must be. `fileNameOrExtension` is accepted and not needed: every supported format is known by
/// its contents. `outItems` receives
/// `SecCertificate`, `SecKey` and `SecIdentity` objects (a PKCS#12 identity, then the file's other
/// certificates).
///
/// With `importKeychain`, every item is added to that keychain; a certificate already there is
/// kept, a private key already there is errSecDuplicateItem, and a failed import adds nothing.
///
/// Statuses: errSecUnknownFormat (data in no readable format, or not in the stated one),
/// errSecUnsupportedFormat (OpenSSH, raw keys, PKCS#7, Netscape sequences), errSecPassphraseRequired
/// (encrypted keys or PKCS#12 without a passphrase), errSecPkcs12VerifyFailure (a PKCS#12 file
/// whose MAC the passphrase does not verify), errSecAuthFailed (an encrypted key the passphrase
/// does not open), errSecDecode (damaged data), errSecMultiplePrivKeys (`importOnlyOne` and more
/// than one private key).
@discardableResult
public func SecItemImport(_ importedData: CFData, _ fileNameOrExtension: CFString?, _ inputFormat: UnsafeMutablePointer<SecExternalFormat>?,
                          _ itemType: UnsafeMutablePointer<SecExternalItemType>?, _ flags: SecItemImportExportFlags,
                          _ keyParams: UnsafePointer<SecItemImportExportKeyParameters>?, _ importKeychain: SecKeychain?,
                          _ outItems: UnsafeMutablePointer<CFArray?>?) -> OSStatus {
    let parameters = keyParams?.pointee ?? SecItemImportExportKeyParameters()
    var passphrase = parameters.passphraseBytes
    defer { if passphrase != nil { zeroize(&passphrase!) } }
    let requested = ExternalFormat(rawValue: inputFormat?.pointee.rawValue ?? 0) ?? .unknown
    let decoded: ExternalItemDecoder.Decoded
    do {
        decoded = try ExternalItemDecoder.decode([UInt8](importedData as Data), format: requested, passphrase: passphrase)
    } catch {
        return error.osStatus
    }
    let objects = ImportedObjects(decoded.items, extractable: parameters.importsExtractable)
    if parameters.flags.contains(.importOnlyOne), objects.privateKeyCount > 1 { return errSecMultiplePrivKeys }
    if let importKeychain {
        let status = objects.add(to: importKeychain)
        guard status == errSecSuccess else { return status }
    }
    inputFormat?.pointee = SecExternalFormat(rawValue: decoded.format.rawValue) ?? .formatUnknown
    itemType?.pointee = SecExternalItemType(rawValue: decoded.itemType.rawValue) ?? .itemTypeUnknown
    outItems?.pointee = NSArray(array: objects.objects)
    return errSecSuccess
}
