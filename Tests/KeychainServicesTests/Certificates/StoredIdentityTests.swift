import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Apple's "Storing an Identity in the Keychain": an identity from a PKCS#12 file added with a
/// label, then found, updated and deleted by that label, embedded and through the agent.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct StoredIdentityTests {
    func find(_ query: [String: Any]) -> (OSStatus, AnyObject?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    /// The identity in a PKCS#12 file OpenSSL made, as `SecPKCS12Import` gives it.
    func importedIdentity(in folder: URL) throws -> (identity: SecIdentity, certificate: SecCertificate) {
        let file = try PKCS12ImportTests().makeFile(legacy: false, rsa: false, passphrase: "move in", in: folder)
        var items: CFArray?
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "move in"] as CFDictionary, &items) == errSecSuccess)
        let identity = try #require((items as? [[String: Any]])?.first?[kSecImportItemIdentity as String] as? SecIdentity)
        var certificate: SecCertificate?
        #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
        return (identity, try #require(certificate))
    }

    /// Whether `identity`'s private key signs what `certificate`'s public key verifies.
    func signsFor(_ identity: SecIdentity, _ certificate: SecCertificate) throws -> Bool {
        var key: SecKey?
        guard SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess, let privateKey = key else { return false }
        let message = Data("client hello".utf8) as CFData
        let signature = try #require(SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA256, message, nil))
        let publicKey = try #require(SecCertificateCopyKey(certificate))
        return SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, nil)
    }

    @Test("Added with a label, an identity is found by it as an identity, a certificate and a key; updated and deleted by it")
    func labelledIdentity() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (imported, certificate) = try importedIdentity(in: folder)
        let label = kSecAttrLabel as String
        let identityClass: [String: Any] = [kSecClass as String: kSecClassIdentity]
        var added: CFTypeRef?
        #expect(SecItemAdd([kSecValueRef as String: imported, label: "My Identity", kSecReturnPersistentRef as String: true] as CFDictionary,
                           &added) == errSecSuccess)
        let addedReference = try #require(added as? Data)
        #expect(addedReference.prefix(4) == Data("idnt".utf8))

        let (status, found) = find(identityClass.merging([label: "My Identity", kSecReturnRef as String: true]) { $1 })
        #expect(status == errSecSuccess)
        let identity = try #require(found as? SecIdentity)
        var foundCertificate: SecCertificate?
        #expect(SecIdentityCopyCertificate(identity, &foundCertificate) == errSecSuccess)
        #expect(foundCertificate == certificate)
        #expect(try signsFor(identity, certificate))
        #expect(find([kSecClass as String: kSecClassCertificate, label: "My Identity"]).0 == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassKey, label: "My Identity"]).0 == errSecSuccess)
        #expect(find(identityClass.merging([label: "Another"]) { $1 }).0 == errSecItemNotFound)

        // Attributes: the key's with the certificate's over them, and the certificate's DER.
        let (_, shaped) = find(identityClass.merging([label: "My Identity", kSecReturnAttributes as String: true,
                                                      kSecReturnPersistentRef as String: true]) { $1 })
        let attributes = try #require(shaped as? [String: Any])
        #expect(attributes[label] as? String == "My Identity")
        #expect(attributes["certdata"] as? Data == SecCertificateCopyData(certificate) as Data)
        #expect((attributes[kSecAttrKeyClass as String] as? NSNumber)?.intValue == 1)
        #expect(attributes[kSecAttrSerialNumber as String] as? Data == SecCertificateCopySerialNumberData(certificate, nil) as Data?)
        #expect(attributes[kSecValuePersistentRef as String] as? Data == addedReference)
        // The identity's persistent reference finds the identity again, with or without its class.
        for query in [[kSecValuePersistentRef as String: addedReference, kSecReturnRef as String: true],
                      identityClass.merging([kSecValuePersistentRef as String: addedReference, kSecReturnRef as String: true]) { $1 }] {
            #expect(find(query).1 as? SecIdentity == identity)
        }
        #expect(find([kSecClass as String: kSecClassKey, kSecValuePersistentRef as String: addedReference]).0 == errSecParam)

        #expect(SecItemUpdate(identityClass.merging([label: "My Identity"]) { $1 } as CFDictionary,
                              [label: "Renamed"] as CFDictionary) == errSecSuccess)
        #expect(find(identityClass.merging([label: "My Identity"]) { $1 }).0 == errSecItemNotFound)
        #expect(find(identityClass.merging([label: "Renamed"]) { $1 }).0 == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassCertificate, label: "Renamed"]).0 == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassKey, label: "Renamed"]).0 == errSecSuccess)

        #expect(SecItemDelete(identityClass.merging([label: "Renamed"]) { $1 } as CFDictionary) == errSecSuccess)
        #expect(find(identityClass).0 == errSecItemNotFound)
        #expect(find([kSecClass as String: kSecClassCertificate]).0 == errSecItemNotFound)
        #expect(find([kSecClass as String: kSecClassKey]).0 == errSecItemNotFound)
    }

    @Test("Each half of an added identity takes the caller's attributes of its class: a tag to the key, a label to both")
    func attributesReachTheirHalf() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (imported, _) = try importedIdentity(in: folder)
        let tag = Data("com.example.client".utf8)
        var result: CFTypeRef?
        #expect(SecItemAdd([kSecValueRef as String: imported, kSecAttrLabel as String: "Client", kSecAttrApplicationTag as String: tag,
                            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock, kSecReturnAttributes as String: true]
                           as CFDictionary, &result) == errSecSuccess)
        let returned = try #require(result as? [String: Any])
        #expect(returned["certdata"] is Data)
        #expect(returned[kSecAttrApplicationTag as String] as? Data == tag)
        let key = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnAttributes as String: true])
        let keyAttributes = try #require(key.1 as? [String: Any])
        #expect(keyAttributes[kSecAttrLabel as String] as? String == "Client")
        #expect(keyAttributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
        let certificate = find([kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "Client",
                                kSecReturnAttributes as String: true])
        let certificateAttributes = try #require(certificate.1 as? [String: Any])
        #expect(certificateAttributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
        #expect(find([kSecClass as String: kSecClassIdentity, kSecAttrApplicationTag as String: tag]).0 == errSecSuccess)
        // The same identity again: both halves are there (the tag is part of the key's primary key).
        #expect(SecItemAdd([kSecValueRef as String: imported, kSecAttrApplicationTag as String: tag] as CFDictionary, nil) == errSecDuplicateItem)
    }
}
