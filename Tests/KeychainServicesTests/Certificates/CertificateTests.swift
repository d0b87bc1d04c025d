import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecCertificate on certificates made by the real OpenSSL, and certificate items in the keychain.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct CertificateTests {
    @Test("SecCertificate reads OpenSSL's certificate: data, summary, common name, e-mails, serial, key")
    func readsCertificate() throws {
        let made = try CertificateTest.make(subject: "/CN=Alice Example/O=Example Org/emailAddress=alice@example.com",
                                            altNames: "email:alice.alt@example.com,DNS:alice.example.com")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let certificate = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        #expect(SecCertificateCopyData(certificate) as Data == made.der)
        #expect(SecCertificateCopySubjectSummary(certificate) as String? == "Alice Example")
        var name: CFString?
        #expect(SecCertificateCopyCommonName(certificate, &name) == errSecSuccess)
        #expect(name as String? == "Alice Example")
        var emails: CFArray?
        #expect(SecCertificateCopyEmailAddresses(certificate, &emails) == errSecSuccess)
        #expect(emails as? [String] == ["alice@example.com", "alice.alt@example.com"])
        #expect(SecCertificateCopySerialNumberData(certificate, nil) as Data? == Data([0x12, 0x34, 0xAB, 0xCD]))
        let key = try #require(SecCertificateCopyKey(certificate))
        #expect(SecKeyGetBlockSize(key) == 32)
        // The key is the one OpenSSL made: its public key matches `openssl pkey -pubout`.
        #expect(try KeyTest.openssl(["pkey", "-in", "@key.pem", "-pubout", "-outform", "DER", "-out", "@pub.der"], in: made.folder) == 0)
        let spki = try Data(contentsOf: made.folder.appendingPathComponent("pub.der"))
        #expect(try KeyTest.data(key) == (try P256.Signing.PublicKey(derRepresentation: spki)).x963Representation)
        let normalizedIssuer = try #require(SecCertificateCopyNormalizedIssuerSequence(certificate) as Data?)
        #expect(normalizedIssuer.first == 0x30 && String(decoding: normalizedIssuer, as: UTF8.self).contains("ALICE EXAMPLE"))
        #expect(SecCertificateCopyNormalizedSubjectSequence(certificate) as Data? == normalizedIssuer)  // self-signed
        #expect("\(certificate)".contains("Alice Example"))
    }

    @Test("A certificate without a common name: summary from its e-mail; CopyCommonName is errSecInternal")
    func noCommonName() throws {
        let made = try CertificateTest.make(subject: "/O=Only An Org", rsa: true, altNames: "email:ops@example.com")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let certificate = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        #expect(SecCertificateCopySubjectSummary(certificate) as String? == "ops@example.com")
        var name: CFString?
        #expect(SecCertificateCopyCommonName(certificate, &name) == errSecInternal)
        #expect(SecKeyGetBlockSize(try #require(SecCertificateCopyKey(certificate))) == 256)
    }

    @Test("Malformed DER gives nil, never a crash: empty, PEM, truncated, trailing bytes, flipped bytes")
    func malformedDER() throws {
        let made = try CertificateTest.make(subject: "/CN=Malformed")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let der = made.der
        #expect(SecCertificateCreateWithData(nil, Data() as CFData) == nil)
        #expect(SecCertificateCreateWithData(nil, Data("-----BEGIN CERTIFICATE-----".utf8) as CFData) == nil)
        for length in stride(from: 0, to: der.count, by: 7) {
            #expect(SecCertificateCreateWithData(nil, der.prefix(length) as CFData) == nil)
        }
        #expect(SecCertificateCreateWithData(nil, (der + Data([0])) as CFData) == nil)
        var flipped = der
        for index in stride(from: 0, to: flipped.count, by: 3) {
            flipped[index] ^= 0xFF
            _ = SecCertificateCreateWithData(nil, flipped as CFData)  // nil or a certificate; never a crash
            flipped[index] ^= 0xFF
        }
    }

    @Test("Certificate items: added by reference with Apple's attributes and default accessibility; found as SecCertificates")
    func certificateItems() throws {
        let made = try CertificateTest.make(subject: "/CN=Stored Cert", serial: "0x0102")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let certificate = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecDuplicateItem)
        #expect(SecItemAdd([kSecClass as String: kSecClassCertificate, kSecValueData as String: made.der] as CFDictionary, nil)
                == errSecDuplicateItem)
        #expect(SecItemAdd([kSecClass as String: kSecClassCertificate, kSecValueData as String: Data("junk".utf8)] as CFDictionary, nil)
                == errSecParam)
        var result: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "Stored Cert",
                                     kSecReturnAttributes as String: true, kSecReturnRef as String: true] as CFDictionary,
                                    &result) == errSecSuccess)
        let found = try #require(result as? [String: Any])
        #expect(found[kSecValueRef as String] as? SecCertificate == certificate)
        #expect(found[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAlways as String)
        #expect((found[kSecAttrCertificateType as String] as? NSNumber)?.intValue == 3)
        #expect(found[kSecAttrSerialNumber as String] as? Data == Data([0x01, 0x02]))
        let key = try #require(SecCertificateCopyKey(certificate))
        let publicData = try KeyTest.data(key)
        #expect(found[kSecAttrPublicKeyHash as String] as? Data == Data(Insecure.SHA1.hash(data: publicData)))
        #expect(found[kSecAttrSubjectKeyID as String] is Data)
        #expect(SecItemDelete([kSecValueRef as String: certificate] as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate] as CFDictionary, nil) == errSecItemNotFound)
    }
}
