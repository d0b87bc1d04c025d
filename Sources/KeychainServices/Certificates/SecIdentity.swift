import Foundation
import KeychainKeys
import KeychainStore

/// A certificate and its private key: an identity (`SecIdentity.c`).
public final class SecIdentity: Hashable, Sendable, CustomStringConvertible {
    let certificate: SecCertificate
    let privateKey: SecKey

    init(certificate: SecCertificate, privateKey: SecKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    public static func == (lhs: SecIdentity, rhs: SecIdentity) -> Bool {
        lhs === rhs || (lhs.certificate == rhs.certificate && lhs.privateKey == rhs.privateKey)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(certificate) }
    public var description: String { "<SecIdentityRef: \(certificate)>" }
}

public typealias SecIdentityRef = SecIdentity

/// The identity's certificate.
@discardableResult
public func SecIdentityCopyCertificate(_ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>) -> OSStatus {
    certificateRef.pointee = identityRef.certificate
    return errSecSuccess
}

/// The identity's private key.
@discardableResult
public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity, _ privateKeyRef: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    privateKeyRef.pointee = identityRef.privateKey
    return errSecSuccess
}

/// The identity of a certificate whose private key is in the keychain (the key whose
/// `kSecAttrApplicationLabel` is the certificate's public key hash); errSecItemNotFound without one.
/// `keychainOrArray`: a `SecKeychain` or an array of them; nil for the search list.
@discardableResult
public func SecIdentityCreateWithCertificate(_ keychainOrArray: CFTypeRef?, _ certificateRef: SecCertificate,
                                             _ identityRef: UnsafeMutablePointer<SecIdentity?>) -> OSStatus {
    var query: [String: Any] = [
        QueryKey.itemClass: ItemClass.key.rawValue, AttributeName.keyClass.code: 1, AttributeName.applicationLabel.code: certificateRef.info.publicKeyHash, QueryKey.returnRef: true,
    ]
    if let keychain = keychainOrArray as? SecKeychain { query[QueryKey.matchSearchList] = [keychain] }
    if let list = keychainOrArray as? [SecKeychain] { query[QueryKey.matchSearchList] = list }
    var result: CFTypeRef?
    let status = SecItemCopyMatching(NSDictionary(dictionary: query), &result)
    guard status == errSecSuccess else { return status }
    guard let key = result as? SecKey else { return errSecItemNotFound }
    identityRef.pointee = SecIdentity(certificate: certificateRef, privateKey: key)
    return errSecSuccess
}
