import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecItemImport with an import keychain: items are added there; a private key already there is
/// errSecDuplicateItem and a failed import adds nothing.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct ImportIntoKeychainTests {
    private func keychain(_ name: String) throws -> SecKeychain {
        var keychain: SecKeychain?
        #expect(SecKeychainCreate(name, 0, nil, false, nil, &keychain) == errSecSuccess)
        return try #require(keychain)
    }

    private func count(_ itemClass: CFString, in keychain: SecKeychain) -> Int {
        var result: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: itemClass, kSecMatchLimit as String: kSecMatchLimitAll,
                                    kSecReturnAttributes as String: true, kSecMatchSearchList as String: [keychain]]
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return 0 }
        return (result as? [Any])?.count ?? 0
    }

    @Test("A certificate and its key import into the named keychain as an identity, once; a failed import leaves nothing")
    func importsIntoKeychain() throws {
        let made = try CertificateTest.make(subject: "/CN=Imported Identity")
        let other = try CertificateTest.make(subject: "/CN=Other Certificate")
        defer { for folder in [made.folder, other.folder] { try? FileManager.default.removeItem(at: folder) } }
        let target = try keychain("imports")
        let key = try ImportExport.read("key.pem", in: made.folder)
        let certificatePEM = try #require(ImportExport.import(made.der).items.first.map { ImportExport.export($0, .formatX509Cert, pem: true).1 })
        let sequence = try #require(certificatePEM) + key
        let imported = ImportExport.import(sequence, into: target)
        #expect(imported.status == errSecSuccess && imported.items.count == 2)
        var found: CFTypeRef?
        let identityQuery: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true,
                                            kSecMatchSearchList as String: [target]]
        #expect(SecItemCopyMatching(identityQuery as CFDictionary, &found) == errSecSuccess)
        let identity = try #require(found as? SecIdentity)
        var certificate: SecCertificate?
        #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
        #expect(certificate.map { SecCertificateCopySubjectSummary($0) as String? } == "Imported Identity")
        // Nothing went to the default keychain.
        var defaultKeychain: SecKeychain?
        #expect(SecKeychainCopyDefault(&defaultKeychain) == errSecSuccess)
        #expect(count(kSecClassCertificate, in: try #require(defaultKeychain)) == 0 && count(kSecClassCertificate, in: target) == 1)
        // Again: the key is there already. A new certificate in the same file is taken back.
        let otherPEM = try #require(ImportExport.import(other.der).items.first.map { ImportExport.export($0, .formatX509Cert, pem: true).1 })
        let again = ImportExport.import(try #require(otherPEM) + sequence, into: target)
        #expect(again.status == errSecDuplicateItem)
        #expect(count(kSecClassCertificate, in: target) == 1 && count(kSecClassKey, in: target) == 1)
        // A certificate already there is kept, not an error.
        #expect(ImportExport.import(made.der, into: target).status == errSecSuccess)
        #expect(count(kSecClassCertificate, in: target) == 1)
    }

    @Test("Keys imported with keyAttributes lacking kSecAttrIsExtractable are stored non-extractable")
    func nonExtractableImport() throws {
        let made = try CertificateTest.make(subject: "/CN=Locked Key")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let target = try keychain("locked")
        let data = try ImportExport.read("key.pem", in: made.folder)
        #expect(ImportExport.import(data, keyAttributes: [kSecAttrIsPermanent], into: target).status == errSecSuccess)
        var found: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: kSecClassKey, kSecReturnRef as String: true, kSecMatchSearchList as String: [target]]
        #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
        let stored = try #require(found as! SecKey?)
        #expect(ImportExport.export(stored, .formatOpenSSL).0 == errSecDataNotAvailable)
        let attributes = SecKeyCopyAttributes(stored) as? [String: Any]
        #expect(attributes?[kSecAttrIsExtractable as String] as? Bool == false)
    }
}
