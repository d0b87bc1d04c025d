import Foundation
import KeychainKeys

/// The passphrase of a PKCS#12 file (`SecPKCS12Import`'s options).
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = NSString(string: "passphrase")
/// The keychain to import into (macOS's file keychain); Keyhaven imports into memory only.
nonisolated(unsafe) public let kSecImportExportKeychain: CFString = NSString(string: "keychain")
/// An access object for imported items (macOS); ignored.
nonisolated(unsafe) public let kSecImportExportAccess: CFString = NSString(string: "access")
/// Result keys of `SecPKCS12Import`: the item's friendlyName.
nonisolated(unsafe) public let kSecImportItemLabel: CFString = NSString(string: "label")
/// The item's localKeyID.
nonisolated(unsafe) public let kSecImportItemKeyID: CFString = NSString(string: "keyid")
/// A trust object for the chain (absent here: Keyhaven evaluates no trust).
nonisolated(unsafe) public let kSecImportItemTrust: CFString = NSString(string: "trust")
/// The certificate chain: the identity's certificate first, then the file's others.
nonisolated(unsafe) public let kSecImportItemCertChain: CFString = NSString(string: "chain")
/// The identity (`SecIdentity`).
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = NSString(string: "identity")

/// Reads a PKCS#12 file: an array of one dictionary per identity with `kSecImportItemIdentity`,
/// `kSecImportItemCertChain`, and `kSecImportItemLabel` / `kSecImportItemKeyID` when the file has
/// them (`kSecImportItemTrust` is absent).
///
/// Opens what OpenSSL 3 makes by default (PBES2, AES-256-CBC, PBKDF2, HMAC-SHA-256 MAC) and with
/// `-legacy` (3DES, RC2-40). A wrong passphrase is errSecAuthFailed; anything else that does not
/// open (damaged, truncated, not PKCS#12) errSecDecode. Nothing is added to a keychain, as on iOS
/// and in the data-protection keychain: add the identity with `SecItemAdd` and `kSecValueRef`.
@discardableResult
public func SecPKCS12Import(_ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    let passphrase = (options[kSecImportExportPassphrase as String] as? String) ?? ""
    do {
        let identity = try PKCS12.read([UInt8](pkcs12_data as Data), passphrase: passphrase)
        let certificate = SecCertificate(identity.certificate)
        var item: [String: Any] = [
            kSecImportItemIdentity as String: SecIdentity(certificate: certificate, privateKey: SecKey(identity.privateKey)),
            kSecImportItemCertChain as String: [certificate] + identity.chain.map { SecCertificate($0) },
        ]
        if let label = identity.label { item[kSecImportItemLabel as String] = label }
        if let keyID = identity.keyID { item[kSecImportItemKeyID as String] = keyID }
        items.pointee = NSArray(array: [NSDictionary(dictionary: item)])
        return errSecSuccess
    } catch .wrongPassphrase {
        return errSecAuthFailed
    } catch {
        return errSecDecode
    }
}
