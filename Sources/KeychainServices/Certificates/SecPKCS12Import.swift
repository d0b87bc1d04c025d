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

/// Reads a PKCS#12 file: an array of one dictionary per identity (each private key with the
/// certificate of its public key, in the file's order) with `kSecImportItemIdentity`,
/// `kSecImportItemCertChain` (the identity's certificate, then the file's certificates that are no
/// identity's), and `kSecImportItemLabel` / `kSecImportItemKeyID` when the file has them
/// (`kSecImportItemTrust` is absent).
///
/// Opens what OpenSSL 3 makes by default (PBES2, AES-256-CBC, PBKDF2, HMAC-SHA-256 MAC) and with
/// `-legacy` (3DES, RC2-40, SHA-1 MAC: the algorithms of macOS's Keychain Access). A wrong
/// passphrase is errSecAuthFailed; anything else that does not open (damaged, truncated, not
/// PKCS#12, no private key with its certificate) errSecDecode. Nothing is added to a keychain, as
/// on iOS and in the data-protection keychain: add the identity with `SecItemAdd` and `kSecValueRef`.
@discardableResult
public func SecPKCS12Import(_ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    let passphrase = (options[kSecImportExportPassphrase as String] as? String) ?? ""
    do {
        let contents = try PKCS12.readAll([UInt8](pkcs12_data as Data), passphrase: passphrase)
        guard !contents.identities.isEmpty else { return errSecDecode }
        let results = contents.identities.map { identity -> NSDictionary in
            let certificate = SecCertificate(identity.certificate)
            var item: [String: Any] = [
                kSecImportItemIdentity as String: SecIdentity(certificate: certificate, privateKey: SecKey(identity.privateKey)),
                kSecImportItemCertChain as String: [certificate] + identity.chain.map { SecCertificate($0) },
            ]
            if let label = identity.label { item[kSecImportItemLabel as String] = label }
            if let keyID = identity.keyID { item[kSecImportItemKeyID as String] = keyID }
            return NSDictionary(dictionary: item)
        }
        items.pointee = NSArray(array: results)
        return errSecSuccess
    } catch .wrongPassphrase {
        return errSecAuthFailed
    } catch {
        return errSecDecode
    }
}
