import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Identities: the join of a certificate and the private key whose label is its public key hash
/// (Apple's `SecItemDb.c` join), embedded and through the agent.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct IdentityTests {
    /// OpenSSL's certificate and its private key as a SecKey.
    func madeIdentity(_ subject: String) throws -> (certificate: SecCertificate, key: SecKey, folder: URL) {
        let made = try CertificateTest.make(subject: subject)
        #expect(try KeyTest.openssl(["ec", "-in", "@key.pem", "-outform", "DER", "-out", "@key.der"], in: made.folder) == 0)
        let sec1 = try Data(contentsOf: made.folder.appendingPathComponent("key.der"))
        let key = try KeyTest.key(try P256.Signing.PrivateKey(derRepresentation: sec1).x963Representation,
                                  type: kSecAttrKeyTypeECSECPrimeRandom, isPrivate: true)
        return (try #require(SecCertificateCreateWithData(nil, made.der as CFData)), key, made.folder)
    }

    func find(_ query: [String: Any]) -> (OSStatus, AnyObject?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    @Test("Adding a certificate beside its key makes an identity; its key signs and the certificate's key verifies")
    func identityFromCertificateAndKey() throws {
        let (certificate, key, folder) = try madeIdentity("/CN=Identity One")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(find([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true]).0 == errSecItemNotFound)
        #expect(SecItemAdd([kSecValueRef as String: key] as CFDictionary, nil) == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true]).0 == errSecItemNotFound)
        #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecSuccess)
        let (status, result) = find([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true])
        #expect(status == errSecSuccess)
        let identity = try #require(result as? SecIdentity)
        var identityCertificate: SecCertificate?, identityKey: SecKey?
        #expect(SecIdentityCopyCertificate(identity, &identityCertificate) == errSecSuccess)
        #expect(SecIdentityCopyPrivateKey(identity, &identityKey) == errSecSuccess)
        #expect(identityCertificate == certificate)
        let message = Data("mTLS handshake".utf8) as CFData
        var error: Unmanaged<CFError>?
        let privateKey = try #require(identityKey)
        let signature = try #require(SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA256, message, &error))
        let certificateKey = try #require(SecCertificateCopyKey(certificate))
        #expect(SecKeyVerifySignature(certificateKey, .ecdsaSignatureMessageX962SHA256, message, signature, &error))

        let (_, attributes) = find([kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "Identity One",
                                    kSecReturnAttributes as String: true])
        let dictionary = try #require(attributes as? [String: Any])
        #expect(dictionary["certdata"] as? Data == SecCertificateCopyData(certificate) as Data)
        #expect((dictionary[kSecAttrKeyClass as String] as? NSNumber)?.intValue == 1)
        #expect(dictionary[kSecAttrSerialNumber as String] as? Data == SecCertificateCopySerialNumberData(certificate, nil) as Data?)
        #expect(find([kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "Someone Else"]).0 == errSecItemNotFound)

        var created: SecIdentity?
        #expect(SecIdentityCreateWithCertificate(nil, certificate, &created) == errSecSuccess)
        #expect(created == identity)
    }

    @Test("SecItemAdd of an identity stores both halves; again is errSecDuplicateItem; delete removes both")
    func addAndDeleteIdentity() throws {
        let (certificate, key, folder) = try madeIdentity("/CN=Identity Two")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(SecItemAdd([kSecValueRef as String: key] as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecSuccess)
        let (_, found) = find([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true])
        let identity = try #require(found as? SecIdentity)
        #expect(SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil) == errSecDuplicateItem)
        #expect(SecItemDelete([kSecClass as String: kSecClassIdentity] as CFDictionary) == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassCertificate]).0 == errSecItemNotFound)
        #expect(find([kSecClass as String: kSecClassKey]).0 == errSecItemNotFound)
        #expect(SecItemDelete([kSecClass as String: kSecClassIdentity] as CFDictionary) == errSecItemNotFound)
    }

    @Test("Deleting an identity keeps a key that another certificate still uses")
    func keySharedByTwoCertificates() throws {
        let made = try CertificateTest.make(subject: "/CN=First")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        #expect(try KeyTest.openssl(["req", "-x509", "-key", "@key.pem", "-subj", "/CN=Second", "-days", "30", "-set_serial", "7",
                                     "-outform", "DER", "-out", "@second.der"], in: made.folder) == 0)
        #expect(try KeyTest.openssl(["ec", "-in", "@key.pem", "-outform", "DER", "-out", "@key.der"], in: made.folder) == 0)
        let sec1 = try Data(contentsOf: made.folder.appendingPathComponent("key.der"))
        let key = try KeyTest.key(try P256.Signing.PrivateKey(derRepresentation: sec1).x963Representation,
                                  type: kSecAttrKeyTypeECSECPrimeRandom, isPrivate: true)
        let first = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        let secondDER = try Data(contentsOf: made.folder.appendingPathComponent("second.der"))
        let second = try #require(SecCertificateCreateWithData(nil, secondDER as CFData))
        for item in [key as AnyObject, first, second] {
            #expect(SecItemAdd([kSecValueRef as String: item] as CFDictionary, nil) == errSecSuccess)
        }
        let (_, all) = find([kSecClass as String: kSecClassIdentity, kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnRef as String: true])
        #expect((all as? [SecIdentity])?.count == 2)
        #expect(SecItemDelete([kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "First"] as CFDictionary) == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassKey]).0 == errSecSuccess)
        let (_, remaining) = find([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true])
        var certificate: SecCertificate?
        let remainingIdentity = try #require(remaining as? SecIdentity)
        #expect(SecIdentityCopyCertificate(remainingIdentity, &certificate) == errSecSuccess)
        #expect(certificate == second)
    }

    @Test("Updating an identity changes its certificate's and its key's attributes")
    func updateIdentity() throws {
        let (certificate, key, folder) = try madeIdentity("/CN=Identity Three")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(SecItemAdd([kSecValueRef as String: key] as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecSuccess)
        let query = [kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "Identity Three"] as CFDictionary
        let changes = [kSecAttrLabel as String: "renamed", kSecAttrApplicationTag as String: Data("tag".utf8)] as CFDictionary
        #expect(SecItemUpdate(query, changes) == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "renamed"]).0 == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassKey, kSecAttrLabel as String: "renamed",
                      kSecAttrApplicationTag as String: Data("tag".utf8)]).0 == errSecSuccess)
        #expect(SecItemUpdate(query, changes) == errSecItemNotFound)
        let renamed = [kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "renamed"] as CFDictionary
        #expect(SecItemUpdate(renamed, [kSecAttrService as String: "x"] as CFDictionary) == errSecNoSuchAttr)
        #expect(SecItemUpdate(renamed, [kSecValueData as String: Data()] as CFDictionary) == errSecParam)
    }
}
