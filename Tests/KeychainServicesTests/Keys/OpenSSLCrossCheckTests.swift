import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Keyhaven's keys against the machine's real OpenSSL: signatures made here verify with
/// `openssl dgst -verify`, OpenSSL's verify here, and ciphertexts cross both ways.
@Suite(.freshKeychain(), .enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct OpenSSLCrossCheckTests {
    @Test("A P-256 ECDSA signature made by Keyhaven verifies with openssl dgst -verify")
    func keyhavenSignatureVerifiesInOpenSSL() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        let message = Data("signed on Linux".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil))
        let publicData = try KeyTest.data(try #require(SecKeyCopyPublicKey(key)))
        let pem = try P256.Signing.PublicKey(x963Representation: publicData).pemRepresentation
        try Data(pem.utf8).write(to: folder.appendingPathComponent("pub.pem"))
        try message.write(to: folder.appendingPathComponent("msg"))
        try (signature as Data).write(to: folder.appendingPathComponent("sig"))
        #expect(try KeyTest.openssl(["dgst", "-sha256", "-verify", "@pub.pem", "-signature", "@sig", "@msg"], in: folder) == 0)
        try Data("tampered".utf8).write(to: folder.appendingPathComponent("msg"))
        #expect(try KeyTest.openssl(["dgst", "-sha256", "-verify", "@pub.pem", "-signature", "@sig", "@msg"], in: folder) != 0)
    }

    @Test("RSA PKCS#1 v1.5 and PSS signatures by Keyhaven verify in OpenSSL; OpenSSL's verify here")
    func rsaSignaturesBothWays() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try KeyTest.openssl(["genrsa", "-out", "@key.pem", "2048"], in: folder) == 0)
        #expect(try KeyTest.openssl(["rsa", "-in", "@key.pem", "-outform", "DER", "-traditional", "-out", "@key.der"], in: folder) == 0)
        #expect(try KeyTest.openssl(["rsa", "-in", "@key.pem", "-RSAPublicKey_out", "-outform", "DER", "-out", "@pub.der"], in: folder) == 0)
        #expect(try KeyTest.openssl(["rsa", "-in", "@key.pem", "-pubout", "-out", "@pub.pem"], in: folder) == 0)
        let privateKey = try KeyTest.key(try Data(contentsOf: folder.appendingPathComponent("key.der")), type: kSecAttrKeyTypeRSA, isPrivate: true)
        let publicKey = try KeyTest.key(try Data(contentsOf: folder.appendingPathComponent("pub.der")), type: kSecAttrKeyTypeRSA, isPrivate: false)
        #expect(try KeyTest.data(try #require(SecKeyCopyPublicKey(privateKey))) == Data(contentsOf: folder.appendingPathComponent("pub.der")))
        let message = Data("RSA both ways".utf8)
        try message.write(to: folder.appendingPathComponent("msg"))
        let pss = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]
        for (algorithm, options) in [(SecKeyAlgorithm.rsaSignatureMessagePKCS1v15SHA256, [String]()), (.rsaSignatureMessagePSSSHA256, pss)] {
            let signature = try #require(SecKeyCreateSignature(privateKey, algorithm, message as CFData, nil))
            try (signature as Data).write(to: folder.appendingPathComponent("sig"))
            #expect(try KeyTest.openssl(["dgst", "-sha256"] + options + ["-verify", "@pub.pem", "-signature", "@sig", "@msg"], in: folder) == 0)
            #expect(try KeyTest.openssl(["dgst", "-sha256"] + options + ["-sign", "@key.pem", "-out", "@osig", "@msg"], in: folder) == 0)
            let opensslSignature = try Data(contentsOf: folder.appendingPathComponent("osig"))
            var error: Unmanaged<CFError>?
            #expect(SecKeyVerifySignature(publicKey, algorithm, message as CFData, opensslSignature as CFData, &error))
        }
    }

    @Test("An OpenSSL P-384 signature verifies in Keyhaven")
    func opensslECSignatureVerifies() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try KeyTest.openssl(["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", "@key.pem"], in: folder) == 0)
        #expect(try KeyTest.openssl(["ec", "-in", "@key.pem", "-pubout", "-outform", "DER", "-out", "@pub.der"], in: folder) == 0)
        let message = Data("signed by OpenSSL".utf8)
        try message.write(to: folder.appendingPathComponent("msg"))
        #expect(try KeyTest.openssl(["dgst", "-sha384", "-sign", "@key.pem", "-out", "@sig", "@msg"], in: folder) == 0)
        let spki = try Data(contentsOf: folder.appendingPathComponent("pub.der"))
        let publicKey = try KeyTest.key(try P384.Signing.PublicKey(derRepresentation: spki).x963Representation,
                                        type: kSecAttrKeyTypeECSECPrimeRandom, isPrivate: false)
        let signature = try Data(contentsOf: folder.appendingPathComponent("sig"))
        var error: Unmanaged<CFError>?
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA384, message as CFData, signature as CFData, &error))
        #expect(!SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, &error))
    }

    @Test("RSA OAEP-SHA256: Keyhaven's ciphertext opens in openssl pkeyutl, and OpenSSL's opens here")
    func oaepBothWays() throws {
        let folder = try KeyTest.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try KeyTest.openssl(["genrsa", "-out", "@key.pem", "2048"], in: folder) == 0)
        #expect(try KeyTest.openssl(["rsa", "-in", "@key.pem", "-outform", "DER", "-traditional", "-out", "@key.der"], in: folder) == 0)
        let privateKey = try KeyTest.key(try Data(contentsOf: folder.appendingPathComponent("key.der")), type: kSecAttrKeyTypeRSA, isPrivate: true)
        let oaep = ["-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"]
        let plaintext = Data("wrapped key bytes".utf8)
        let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
        let ciphertext = try #require(SecKeyCreateEncryptedData(publicKey, .rsaEncryptionOAEPSHA256, plaintext as CFData, nil))
        try (ciphertext as Data).write(to: folder.appendingPathComponent("ct"))
        #expect(try KeyTest.openssl(["pkeyutl", "-decrypt", "-inkey", "@key.pem", "-in", "@ct", "-out", "@pt"] + oaep, in: folder) == 0)
        #expect(try Data(contentsOf: folder.appendingPathComponent("pt")) == plaintext)
        try plaintext.write(to: folder.appendingPathComponent("pt2"))
        #expect(try KeyTest.openssl(["pkeyutl", "-encrypt", "-inkey", "@key.pem", "-in", "@pt2", "-out", "@ct2"] + oaep, in: folder) == 0)
        let opensslCiphertext = try Data(contentsOf: folder.appendingPathComponent("ct2"))
        let opened = try #require(SecKeyCreateDecryptedData(privateKey, .rsaEncryptionOAEPSHA256, opensslCiphertext as CFData, nil))
        #expect(opened as Data == plaintext)
    }
}
