import Foundation
import KeychainKeys
import KeychainTestSupport
import Testing

/// Keys and certificates as OpenSSL writes and reads them: the real `openssl` on real files.
@Suite("Keys and certificates against OpenSSL")
final class OpenSSLFilesTests {
    let folder: String

    init() throws { folder = try TemporaryFolder.make(prefix: "keyhaven-keys") }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    @discardableResult
    func openssl(_ arguments: [String]) throws -> Int32 {
        try Shell.run("/usr/bin/env", ["openssl"] + arguments.map { $0.hasPrefix("@") ? folder + "/" + $0.dropFirst() : $0 })
    }

    func file(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    @Test("A key openssl made is read, signs, and openssl verifies the signature with the public key Keyhaven writes",
          arguments: [["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]])
    func opensslKeySigns(generation: [String]) throws {
        #expect(try openssl(["genpkey"] + generation + ["-out", "@key.pem"]) == 0)
        let decoded = try ExternalItemDecoder.decode(try file("key.pem"), format: .unknown, passphrase: nil)
        guard case .key(let key)? = decoded.items.first else { Issue.record("no key read"); return }
        #expect(key.isPrivate && decoded.items.count == 1)
        let name = key.kind.isRSA ? "algid:sign:RSA:message-PKCS1v15:SHA256" : "algid:sign:ECDSA:message-X962:SHA256"
        let message = Array("signed by a key openssl made".utf8)
        try write("message", message)
        try write("signature", try key.sign(try #require(KeyAlgorithm(appleName: name)), message))
        try write("public.pem", Array(key.publicPEM.utf8))
        #expect(try openssl(["dgst", "-sha256", "-verify", "@public.pem", "-signature", "@signature", "@message"]) == 0)
        try write("other.pem", Array(try AsymmetricKey.generate(key.kind).publicPEM.utf8))
        #expect(try openssl(["dgst", "-sha256", "-verify", "@other.pem", "-signature", "@signature", "@message"]) != 0)
    }

    @Test("A key Keyhaven made is one openssl reads as the same key")
    func keyhavenKeyInOpenSSL() throws {
        let key = try AsymmetricKey.generate(.ec(.p384))
        try write("key.pem", Array(key.pkcs8PEM.utf8))
        #expect(try openssl(["pkey", "-in", "@key.pem", "-pubout", "-out", "@public.pem"]) == 0)
        #expect(String(decoding: try file("public.pem"), as: UTF8.self) == key.publicPEM)
    }

    @Test("An encrypted PKCS#8 key opens with its passphrase only")
    func encryptedKey() throws {
        #expect(try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes-256-cbc",
                             "-pass", "pass:open sesame", "-out", "@key.pem"]) == 0)
        let bytes = try file("key.pem")
        let decoded = try ExternalItemDecoder.decode(bytes, format: .unknown, passphrase: Array("open sesame".utf8))
        #expect(decoded.items.count == 1)
        #expect(throws: ImportExportError.self) { _ = try ExternalItemDecoder.decode(bytes, format: .unknown, passphrase: Array("wrong".utf8)) }
        #expect(throws: ImportExportError.self) { _ = try ExternalItemDecoder.decode(bytes, format: .pkcs12, passphrase: nil) }
    }

    @Test("A certificate openssl made: its names, serial, validity and public key as openssl states them")
    func certificate() throws {
        #expect(try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "@key.pem",
                             "-out", "@cert.der", "-outform", "DER", "-days", "30", "-set_serial", "4660",
                             "-subj", "/CN=Ada Lovelace/emailAddress=ada@example.org"]) == 0)
        let info = try #require(CertificateInfo(der: try file("cert.der")))
        #expect(info.commonNames == ["Ada Lovelace"])
        #expect(info.emailAddresses == ["ada@example.org"])
        #expect(info.serialNumber == [0x12, 0x34])
        #expect(info.isWithinValidity(Date()))
        #expect(!info.isWithinValidity(Date().addingTimeInterval(40 * 86_400)))
        let key = try ExternalItemDecoder.decode(try file("key.pem"), format: .unknown, passphrase: nil)
        guard case .key(let privateKey)? = key.items.first else { Issue.record("no key read"); return }
        #expect(info.publicKey?.isSameKey(as: privateKey.publicKey) == true)
        #expect(CertificateInfo(der: Array(try file("cert.der").dropLast())) == nil)
    }
}
