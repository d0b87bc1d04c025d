import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecItemExport and SecItemImport: every format Keyhaven writes is read back, read by the real
/// `openssl`, and every key file `openssl` writes is read; Apple's statuses for bad input.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct ImportExportTests {
    static let keyKinds: [(String, Int)] = [("EC", 256), ("EC", 384), ("RSA", 2048)]

    @Test("A private key in every key format exports, imports back as the same key, and opens in OpenSSL", arguments: keyKinds)
    func privateKeyRoundTrips(_ type: String, _ bits: Int) throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rsa = type == "RSA"
        let key = try KeyTest.randomKey(rsa ? kSecAttrKeyTypeRSA : kSecAttrKeyTypeECSECPrimeRandom, bits)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let publicPEM = try #require(ImportExport.export(publicKey, .formatOpenSSL, pem: true).1)
        let cases: [(SecExternalFormat, Bool, String, [String])] = [
            (.formatOpenSSL, false, "", ["-inform", "DER"]),
            (.formatOpenSSL, true, rsa ? "RSA PRIVATE KEY" : "EC PRIVATE KEY", []),
            (.formatBSAFE, true, "PRIVATE KEY", []),
            (.formatWrappedPKCS8, false, "", ["-inform", "DER", "-passin", "pass:wrap pass"]),
            (.formatWrappedPKCS8, true, "ENCRYPTED PRIVATE KEY", ["-passin", "pass:wrap pass"]),
            (.formatWrappedOpenSSL, false, "Proc-Type: 4,ENCRYPTED", ["-passin", "pass:wrap pass"]),
        ]
        for (format, pem, marker, opensslOptions) in cases {
            let wrapped = format == .formatWrappedPKCS8 || format == .formatWrappedOpenSSL
            let (status, data) = ImportExport.export(key, format, pem: pem, passphrase: wrapped ? "wrap pass" as NSString : nil)
            #expect(status == errSecSuccess, "\(format)")
            let exported = try #require(data)
            if !marker.isEmpty { #expect(String(decoding: exported, as: UTF8.self).contains(marker), "\(format)") }
            let back = ImportExport.import(exported, format: format, passphrase: wrapped ? "wrap pass" as NSString : nil)
            #expect(back.status == errSecSuccess, "\(format)")
            #expect(back.items.first as? SecKey == key, "\(format)")
            #expect(back.itemType == .itemTypePrivateKey && back.format == format, "\(format): \(back.format)")
            // OpenSSL reads the same key: its public key is ours.
            try ImportExport.write(exported, "key", in: folder)
            #expect(try ImportExport.openssl(["pkey", "-in", "@key"] + opensslOptions + ["-pubout", "-out", "@theirs.pub"], in: folder) == 0,
                    "\(format)")
            #expect(try ImportExport.read("theirs.pub", in: folder) == publicPEM, "\(format)")
        }
        // Encrypted PKCS#8: PBES2 with PBKDF2-HMAC-SHA-256 at 100,000 (0x186A0) rounds and AES-256-CBC.
        let wrapped = try #require(ImportExport.export(key, .formatWrappedPKCS8, passphrase: "p" as NSString).1)
        try ImportExport.write(wrapped, "wrapped.der", in: folder)
        let dump = folder.appendingPathComponent("asn1.txt").path
        #expect(try Shell.run("/bin/sh", ["-c", "openssl asn1parse -inform DER -in '\(folder.path)/wrapped.der' > '\(dump)'"]) == 0)
        let parsed = try String(contentsOfFile: dump, encoding: .utf8)
        #expect(parsed.contains("PBES2") && parsed.contains("PBKDF2") && parsed.contains(":0186A0") && parsed.contains("hmacWithSHA256")
                && parsed.contains("aes-256-cbc"), "\(parsed)")
    }

    @Test("Keys OpenSSL writes import: PKCS#8, SEC1 with EC PARAMETERS, PKCS#1, encrypted PKCS#8 and traditional, DER, public keys")
    func importsOpenSSLKeys() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ImportExport.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "@ec.pem"], in: folder)
        try ImportExport.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "@rsa.pem"], in: folder)
        try ImportExport.openssl(["ecparam", "-name", "secp384r1", "-genkey", "-out", "@ecparam.pem"], in: folder)
        let commands: [[String]] = [
            ["ec", "-in", "@ec.pem", "-out", "@ec-sec1.pem"],
            ["ec", "-in", "@ec.pem", "-outform", "DER", "-out", "@ec-sec1.der"],
            ["rsa", "-in", "@rsa.pem", "-traditional", "-out", "@rsa-pkcs1.pem"],
            ["pkcs8", "-topk8", "-in", "@ec.pem", "-v2", "aes-256-cbc", "-passout", "pass:secret", "-out", "@ec-enc.pem"],
            ["pkcs8", "-topk8", "-in", "@rsa.pem", "-v2", "aes-128-cbc", "-passout", "pass:secret", "-outform", "DER", "-out", "@rsa-enc.der"],
            ["rsa", "-in", "@rsa.pem", "-aes256", "-traditional", "-passout", "pass:secret", "-out", "@rsa-trad-enc.pem"],
            ["ec", "-in", "@ec.pem", "-des3", "-passout", "pass:secret", "-out", "@ec-trad-enc.pem"],
            ["pkey", "-in", "@ec.pem", "-pubout", "-out", "@ec-pub.pem"],
            ["pkey", "-in", "@rsa.pem", "-pubout", "-outform", "DER", "-out", "@rsa-pub.der"],
            ["rsa", "-in", "@rsa.pem", "-RSAPublicKey_out", "-out", "@rsa-pkcs1-pub.pem"],
        ]
        for command in commands { #expect(try ImportExport.openssl(command, in: folder) == 0, "\(command)") }
        let expectations: [(String, SecExternalFormat, SecExternalItemType, Bool)] = [
            ("ec.pem", .formatBSAFE, .itemTypePrivateKey, false), ("rsa.pem", .formatBSAFE, .itemTypePrivateKey, false),
            ("ecparam.pem", .formatOpenSSL, .itemTypePrivateKey, false), ("ec-sec1.pem", .formatOpenSSL, .itemTypePrivateKey, false),
            ("ec-sec1.der", .formatOpenSSL, .itemTypePrivateKey, false), ("rsa-pkcs1.pem", .formatOpenSSL, .itemTypePrivateKey, false),
            ("ec-enc.pem", .formatWrappedPKCS8, .itemTypePrivateKey, true), ("rsa-enc.der", .formatWrappedPKCS8, .itemTypePrivateKey, true),
            ("rsa-trad-enc.pem", .formatWrappedOpenSSL, .itemTypePrivateKey, true),
            ("ec-trad-enc.pem", .formatWrappedOpenSSL, .itemTypePrivateKey, true),
            ("ec-pub.pem", .formatOpenSSL, .itemTypePublicKey, false), ("rsa-pub.der", .formatOpenSSL, .itemTypePublicKey, false),
            ("rsa-pkcs1-pub.pem", .formatBSAFE, .itemTypePublicKey, false),
        ]
        for (name, format, itemType, encrypted) in expectations {
            let data = try ImportExport.read(name, in: folder)
            let imported = ImportExport.import(data, passphrase: encrypted ? "secret" as NSString : nil)
            #expect(imported.status == errSecSuccess, "\(name)")
            #expect(imported.format == format && imported.itemType == itemType, "\(name): \(imported.format) \(imported.itemType)")
            let key = try #require(imported.items.first as? SecKey, "\(name)")
            // The same key as OpenSSL's: compare the public halves as OpenSSL writes them.
            let source = name.hasPrefix("ecparam") ? "ecparam.pem" : name.hasPrefix("ec") ? "ec.pem" : "rsa.pem"
            try ImportExport.openssl(["pkey", "-in", "@\(source)", "-pubout", "-out", "@expected.pub"], in: folder)
            let publicKey = imported.itemType == .itemTypePublicKey ? key : try #require(SecKeyCopyPublicKey(key))
            #expect(ImportExport.export(publicKey, .formatOpenSSL, pem: true).1 == (try ImportExport.read("expected.pub", in: folder)),
                    "\(name)")
            if encrypted {
                #expect(ImportExport.import(data).status == errSecPassphraseRequired, "\(name)")
                #expect(ImportExport.import(data, passphrase: "wrong" as NSString).status == errSecAuthFailed, "\(name)")
                #expect(ImportExport.import(data, passphrase: Data("secret".utf8) as NSData).status == errSecSuccess, "\(name): CFData")
            }
        }
    }

    @Test("An imported key signs, and OpenSSL verifies the signature with the file's public key")
    func importedKeySigns() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ImportExport.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "@ec.pem"], in: folder)
        try ImportExport.openssl(["pkey", "-in", "@ec.pem", "-pubout", "-out", "@ec.pub"], in: folder)
        let key = try #require(ImportExport.import(try ImportExport.read("ec.pem", in: folder)).items.first as? SecKey)
        let message = Data("imported and signed".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil))
        try ImportExport.write(signature as Data, "sig", in: folder)
        try ImportExport.write(message, "msg", in: folder)
        #expect(try ImportExport.openssl(["dgst", "-sha256", "-verify", "@ec.pub", "-signature", "@sig", "@msg"], in: folder) == 0)
    }

    @Test("Certificates: DER by default, PEM with pemArmour; a PEM sequence of identity parts reads back as a certificate and a key")
    func certificatesAndSequences() throws {
        let made = try CertificateTest.make(subject: "/CN=Exported Leaf")
        defer { try? FileManager.default.removeItem(at: made.folder) }
        let certificate = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        #expect(ImportExport.export(certificate, .formatUnknown).1 == made.der)
        let pem = try #require(ImportExport.export(certificate, .formatX509Cert, pem: true).1)
        try ImportExport.write(pem, "cert.pem", in: made.folder)
        #expect(try ImportExport.openssl(["x509", "-in", "@cert.pem", "-noout"], in: made.folder) == 0)
        let back = ImportExport.import(pem)
        #expect(back.status == errSecSuccess && back.format == .formatX509Cert && back.itemType == .itemTypeCertificate)
        #expect(back.items.first as? SecCertificate == certificate)

        let (identity, _, key) = try identity(made)
        let sequence = try #require(ImportExport.export(identity, .formatUnknown).1)
        let text = String(decoding: sequence, as: UTF8.self)
        #expect(text.hasPrefix("-----BEGIN CERTIFICATE-----") && text.contains("-----BEGIN EC PRIVATE KEY-----"))
        let parts = ImportExport.import(sequence)
        #expect(parts.status == errSecSuccess && parts.format == .formatPEMSequence && parts.itemType == .itemTypeAggregate)
        #expect(parts.items.count == 2 && parts.items[0] as? SecCertificate == certificate && parts.items[1] as? SecKey == key)
        // With a passphrase, the sequence's key is encrypted PKCS#8.
        let wrapped = try #require(ImportExport.export(identity, .formatPEMSequence, passphrase: "p" as NSString).1)
        #expect(String(decoding: wrapped, as: UTF8.self).contains("ENCRYPTED PRIVATE KEY"))
        #expect(ImportExport.import(wrapped).status == errSecPassphraseRequired)
        #expect(ImportExport.import(wrapped, flags: [.importOnlyOne], keyAttributes: nil).status == errSecPassphraseRequired)
        let twoKeys = Data(String(decoding: try #require(ImportExport.export(key, .formatOpenSSL, pem: true).1), as: UTF8.self).utf8)
        #expect(ImportExport.import(twoKeys + twoKeys, flags: [.importOnlyOne]).status == errSecMultiplePrivKeys)
        #expect(ImportExport.import(twoKeys + twoKeys).items.count == 2)
    }

    /// The identity of a made certificate: its key (read from OpenSSL's file) added to the
    /// keychain, then Apple's `SecIdentityCreateWithCertificate`.
    private func identity(_ made: CertificateTest.Made) throws -> (SecIdentity, SecCertificate, SecKey) {
        let certificate = try #require(SecCertificateCreateWithData(nil, made.der as CFData))
        let key = try #require(ImportExport.import(try ImportExport.read("key.pem", in: made.folder)).items.first as? SecKey)
        #expect(SecItemAdd([kSecClass as String: kSecClassKey, kSecValueRef as String: key] as CFDictionary, nil) == errSecSuccess)
        var identity: SecIdentity?
        #expect(SecIdentityCreateWithCertificate(nil, certificate, &identity) == errSecSuccess)
        return (try #require(identity), certificate, key)
    }

    @Test("PKCS#12 export of two identities opens in OpenSSL with both; import needs the passphrase (-25260), a wrong one is -25264")
    func pkcs12() throws {
        let first = try CertificateTest.make(subject: "/CN=First Identity")
        let second = try CertificateTest.make(subject: "/CN=Second Identity", rsa: true)
        defer { for made in [first, second] { try? FileManager.default.removeItem(at: made.folder) } }
        let identities = [try identity(first).0, try identity(second).0]
        #expect(ImportExport.export(identities as NSArray, .formatPKCS12).0 == errSecPassphraseRequired)
        let file = try #require(ImportExport.export(identities as NSArray, .formatPKCS12, passphrase: "p12" as NSString).1)
        try ImportExport.write(file, "both.p12", in: first.folder)
        #expect(try ImportExport.openssl(["pkcs12", "-in", "@both.p12", "-passin", "pass:p12", "-nodes", "-out", "@both.pem"],
                                         in: first.folder) == 0)
        let text = try ImportExport.text("both.pem", in: first.folder)
        #expect(text.contains("First Identity") && text.contains("Second Identity"))
        #expect(text.components(separatedBy: "BEGIN PRIVATE KEY").count == 3)
        #expect(ImportExport.import(file).status == errSecPassphraseRequired)
        #expect(ImportExport.import(file, passphrase: "wrong" as NSString).status == errSecPkcs12VerifyFailure)
        let back = ImportExport.import(file, fileName: "both.p12", passphrase: "p12" as NSString)
        #expect(back.status == errSecSuccess && back.format == .formatPKCS12 && back.itemType == .itemTypeAggregate)
        #expect(Set(back.items.compactMap { $0 as? SecIdentity }) == Set(identities))
        // SecPKCS12Import: one dictionary per identity, in the file's order, labelled with its certificate's name.
        var items: CFArray?
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "p12"] as CFDictionary, &items) == errSecSuccess)
        let results = try #require(items as? [[String: Any]])
        #expect(results.compactMap { $0[kSecImportItemLabel as String] as? String } == ["First Identity", "Second Identity"])
        #expect(results.compactMap { $0[kSecImportItemIdentity as String] as? SecIdentity } == identities)
        #expect(results.allSatisfy { ($0[kSecImportItemKeyID as String] as? Data)?.count == 20 })
    }

    @Test("Bad input and formats that do not fit get Apple's statuses, and a non-extractable key never leaves")
    func failures() throws {
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        #expect(ImportExport.import(Data("not a key".utf8)).status == errSecUnknownFormat)
        #expect(ImportExport.import(Data()).status == errSecUnknownFormat)
        #expect(ImportExport.import(Data([0x30, 0x03, 0x02, 0x01, 0x01])).status == errSecUnknownFormat)
        #expect(ImportExport.import(Data("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8)).status == errSecDecode)
        let der = try #require(ImportExport.export(key, .formatOpenSSL).1)
        #expect(ImportExport.import(der, format: .formatX509Cert).status == errSecUnknownFormat)
        #expect(ImportExport.import(der, format: .formatSSH).status == errSecUnsupportedFormat)
        #expect(ImportExport.import(der.prefix(der.count - 5)).status == errSecUnknownFormat)
        #expect(ImportExport.export(key, .formatPKCS7).0 == errSecUnsupportedFormat)
        #expect(ImportExport.export(key, .formatWrappedPKCS8).0 == errSecPassphraseRequired)
        #expect(ImportExport.export(key, .formatX509Cert).0 == errSecUnsupportedFormat)
        #expect(ImportExport.export([key, key] as NSArray, .formatOpenSSL).0 == errSecParam)
        #expect(ImportExport.export(NSString(string: "text"), .formatUnknown).0 == errSecParam)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        #expect(ImportExport.export(publicKey, .formatWrappedOpenSSL, passphrase: "x" as NSString).0 == errSecUnsupportedFormat)
        // Imported without kSecAttrIsExtractable in keyAttributes: never exported, in any format.
        let lockedImport = ImportExport.import(der, keyAttributes: [kSecAttrIsSensitive])
        let locked = try #require(lockedImport.items.first as? SecKey)
        for format in [SecExternalFormat.formatOpenSSL, .formatBSAFE, .formatPEMSequence] {
            #expect(ImportExport.export(locked, format).0 == errSecDataNotAvailable)
        }
        #expect(ImportExport.export(locked, .formatWrappedPKCS8, passphrase: "x" as NSString).0 == errSecDataNotAvailable)
        #expect(SecKeyCopyExternalRepresentation(locked, nil) == nil)
    }
}
