import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecPKCS12Import on files made by the real `openssl pkcs12 -export`, with OpenSSL 3's defaults
/// and with `-legacy`; wrong passphrases and damaged files.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct PKCS12ImportTests {
    /// A CA, a leaf signed by it, and the leaf's key and certificate with the CA in a .p12.
    func makeFile(legacy: Bool, rsa: Bool, passphrase: String, in folder: URL) throws -> Data {
        let key = rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        #expect(try KeyTest.openssl(["req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "@ca.key",
                                     "-subj", "/CN=Test CA", "-days", "30", "-out", "@ca.pem"], in: folder) == 0)
        #expect(try KeyTest.openssl(["req", "-nodes"] + key + ["-keyout", "@leaf.key", "-subj", "/CN=Leaf Identity", "-out", "@leaf.csr"],
                                    in: folder) == 0)
        #expect(try KeyTest.openssl(["x509", "-req", "-in", "@leaf.csr", "-CA", "@ca.pem", "-CAkey", "@ca.key", "-set_serial", "99",
                                     "-days", "30", "-out", "@leaf.pem"], in: folder) == 0)
        let export = ["pkcs12", "-export", "-inkey", "@leaf.key", "-in", "@leaf.pem", "-certfile", "@ca.pem", "-name", "my identity",
                      "-passout", "pass:\(passphrase)", "-out", "@id.p12"] + (legacy ? ["-legacy"] : [])
        #expect(try KeyTest.openssl(export, in: folder) == 0)
        return try Data(contentsOf: folder.appendingPathComponent("id.p12"))
    }

    static let variants: [(Bool, Bool)] = [(false, false), (true, false), (false, true), (true, true)]

    @Test("OpenSSL's PKCS#12 (default and -legacy, EC and RSA) imports; its key signs for its certificate", arguments: variants)
    func importsOpenSSLFile(_ legacy: Bool, _ rsa: Bool) throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try makeFile(legacy: legacy, rsa: rsa, passphrase: "p12 pass", in: folder)
        var items: CFArray?
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "p12 pass"] as CFDictionary, &items) == errSecSuccess)
        let item = try #require((items as? [[String: Any]])?.first)
        #expect(item[kSecImportItemLabel as String] as? String == "my identity")
        #expect(item[kSecImportItemKeyID as String] is Data)
        #expect(item[kSecImportItemTrust as String] == nil)
        let chain = try #require(item[kSecImportItemCertChain as String] as? [SecCertificate])
        #expect(chain.map { SecCertificateCopySubjectSummary($0) as String? } == ["Leaf Identity", "Test CA"])
        let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
        var key: SecKey?, certificate: SecCertificate?
        #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
        #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
        let algorithm: SecKeyAlgorithm = rsa ? .rsaSignatureMessagePKCS1v15SHA256 : .ecdsaSignatureMessageX962SHA256
        let message = Data("client hello".utf8) as CFData
        let privateKey = try #require(key)
        let signature = try #require(SecKeyCreateSignature(privateKey, algorithm, message, nil))
        let leaf = try #require(certificate)
        let certificateKey = try #require(SecCertificateCopyKey(leaf))
        #expect(SecKeyVerifySignature(certificateKey, algorithm, message, signature, nil))
        // Its signature verifies in OpenSSL against the file's certificate too.
        try (signature as Data).write(to: folder.appendingPathComponent("sig"))
        try (message as Data).write(to: folder.appendingPathComponent("msg"))
        #expect(try KeyTest.openssl(["x509", "-in", "@leaf.pem", "-pubkey", "-noout", "-out", "@leaf.pub"], in: folder) == 0)
        #expect(try KeyTest.openssl(["dgst", "-sha256", "-verify", "@leaf.pub", "-signature", "@sig", "@msg"], in: folder) == 0)
        // Import adds nothing to the keychain; SecItemAdd with the identity does.
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecItemNotFound)
        #expect(SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil) == errSecSuccess)
        var found: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true] as CFDictionary, &found) == errSecSuccess)
        #expect(found as? SecIdentity == identity)
    }

    @Test("A file made with an empty passphrase (-passout pass:) imports without one, default and -legacy", arguments: [false, true])
    func emptyPassphrase(_ legacy: Bool) throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try makeFile(legacy: legacy, rsa: false, passphrase: "", in: folder)
        var items: CFArray?
        #expect(SecPKCS12Import(file as CFData, [:] as CFDictionary, &items) == errSecSuccess)
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: ""] as CFDictionary, &items) == errSecSuccess)
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "x"] as CFDictionary, &items) == errSecAuthFailed)
    }

    @Test("A wrong passphrase is errSecAuthFailed; damaged or truncated files and non-PKCS#12 data errSecDecode")
    func failures() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try makeFile(legacy: false, rsa: false, passphrase: "right", in: folder)
        var items: CFArray?
        let options = [kSecImportExportPassphrase as String: "right"] as CFDictionary
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "wrong"] as CFDictionary, &items) == errSecAuthFailed)
        #expect(SecPKCS12Import(file as CFData, [:] as CFDictionary, &items) == errSecAuthFailed)
        #expect(items == nil)
        #expect(SecPKCS12Import(Data() as CFData, options, &items) == errSecDecode)
        #expect(SecPKCS12Import(Data("not a pkcs12".utf8) as CFData, options, &items) == errSecDecode)
        for length in stride(from: 1, to: file.count, by: max(1, file.count / 40)) {
            #expect(SecPKCS12Import(file.prefix(length) as CFData, options, &items) == errSecDecode)
        }
        for index in stride(from: 0, to: file.count, by: max(1, file.count / 60)) {
            var damaged = file
            damaged[index] ^= 0x55
            let status = SecPKCS12Import(damaged as CFData, options, &items)
            #expect(status == errSecDecode || status == errSecAuthFailed || status == errSecSuccess)
        }
        #expect(items == nil)
    }
}

import KeychainKeys

extension PKCS12ImportTests {
    @Test("Keyhaven's PKCS#12 (AES-256-CBC, PBKDF2, HMAC-SHA-256, 100,000 rounds) opens in openssl pkcs12 and imports back")
    func exportOpensInOpenSSL() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = try makeFile(legacy: true, rsa: false, passphrase: "in", in: folder)
        let identity = try PKCS12.read(Array(original), passphrase: "in")
        let exported = try PKCS12.write(privateKey: identity.privateKey, certificate: identity.certificate, chain: identity.chain,
                                        label: "exported identity", passphrase: "out pass")
        try Data(exported).write(to: folder.appendingPathComponent("out.p12"))
        #expect(try KeyTest.openssl(["pkcs12", "-in", "@out.p12", "-passin", "pass:out pass", "-nodes", "-out", "@out.pem"], in: folder) == 0)
        let pem = try String(contentsOf: folder.appendingPathComponent("out.pem"), encoding: .utf8)
        #expect(pem.contains("Leaf Identity") && pem.contains("Test CA") && pem.contains("PRIVATE KEY"))
        #expect(try KeyTest.openssl(["pkcs12", "-in", "@out.p12", "-passin", "pass:wrong", "-nodes", "-out", "@bad.pem"], in: folder) != 0)
        // OpenSSL 3's default algorithms, as `openssl pkcs12 -info` reports them.
        let info = folder.appendingPathComponent("info.txt").path
        #expect(try Shell.run("/bin/sh", ["-c", "openssl pkcs12 -in '\(folder.path)/out.p12' -passin 'pass:out pass' -info -noout 2> '\(info)'"]) == 0)
        let report = try String(contentsOfFile: info, encoding: .utf8)
        #expect(report.contains("MAC: sha256") && report.contains("PBES2") && report.contains("AES-256-CBC"), "\(report)")
        // 100,000 rounds for the MAC and for each PBKDF2 (docs/threat-model.md), not OpenSSL's 2,048.
        #expect(report.contains("MAC: sha256, Iteration 100000") && report.contains("AES-256-CBC, Iteration 100000, PRF hmacWithSHA256")
                && !report.contains("Iteration 2048"), "\(report)")
        var items: CFArray?
        #expect(SecPKCS12Import(Data(exported) as CFData, [kSecImportExportPassphrase as String: "out pass"] as CFDictionary, &items)
                == errSecSuccess)
        let item = try #require((items as? [[String: Any]])?.first)
        #expect(item[kSecImportItemLabel as String] as? String == "exported identity")
        #expect((item[kSecImportItemCertChain as String] as? [SecCertificate])?.count == 2)
    }
}
