import Foundation
import KeychainStore
import KeychainTestSupport
import Testing

/// `import`, `find-certificate` and `find-identity` with files made by the real `openssl`.
@Suite(.freshKeychain(), .enabled(if: (try? Shell.run("/usr/bin/env", ["sh", "-c", "command -v openssl"])) == 0,
                                  "needs the openssl command (scripts/bootstrap installs it)"))
struct CertificateCommandTests {
    /// Runs `openssl` in `folder` (arguments starting with @ are files there).
    func openssl(_ arguments: [String], in folder: String) throws -> Int32 {
        try Shell.run("/usr/bin/env", ["openssl"] + arguments.map { $0.hasPrefix("@") ? folder + "/" + $0.dropFirst() : $0 })
    }

    func output(_ command: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = try Shell.run("/bin/sh", ["-c", "\(command) > '\(file)'"])
        return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }

    @Test("import of an openssl pkcs12 file makes one identity; find-identity and find-certificate show OpenSSL's fingerprints and PEM")
    func importAndFind() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-cert-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try openssl(["req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "@key.pem",
                             "-subj", "/CN=CLI Identity/emailAddress=cli@example.com", "-days", "30", "-out", "@cert.pem"], in: folder) == 0)
        #expect(try openssl(["req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "@other.key",
                             "-subj", "/CN=Just A Certificate", "-days", "30", "-outform", "DER", "-out", "@other.der"], in: folder) == 0)
        #expect(try openssl(["pkcs12", "-export", "-inkey", "@key.pem", "-in", "@cert.pem", "-passout", "pass:secret", "-out", "@id.p12"],
                            in: folder) == 0)
        let k = try CommandRunner()
        defer { k.finish() }
        // A passphrase that does not verify the MAC: errSecPkcs12VerifyFailure, as security(1) reports it.
        let wrong = try k.run("import", folder + "/id.p12", "-P", "wrong")
        #expect(wrong.status == 80 && wrong.error.contains("MAC verification failed"), "\(wrong.error)")
        let imported = try k.run("import", folder + "/id.p12", "-P", "secret")
        #expect(imported.status == 0 && imported.output == "1 identity imported.\n")
        #expect(try k.run("import", folder + "/id.p12", "-P", "secret").status == 45)
        #expect(try k.run("import", folder + "/other.der").output == "1 certificate imported.\n")

        let sha1 = try output("openssl x509 -in '\(folder)/cert.pem' -noout -fingerprint -sha1")
            .split(separator: "=").last.map { $0.replacingOccurrences(of: ":", with: "").trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let identities = try k.run("find-identity")
        #expect(identities.output.contains("1) \(sha1) \"CLI Identity\""), "\(identities.output)")
        #expect(identities.output.contains("1 identities found") && identities.output.contains("1 valid identities found"))
        #expect(!identities.output.contains("Just A Certificate"))

        let pem = try k.run("find-certificate", "-c", "CLI", "-p")
        #expect(pem.output == (try String(contentsOfFile: folder + "/cert.pem", encoding: .utf8)))
        let sha256 = try output("openssl x509 -in '\(folder)/cert.pem' -noout -fingerprint -sha256")
            .split(separator: "=").last.map { $0.replacingOccurrences(of: ":", with: "").trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let hashes = try k.run("find-certificate", "-e", "cli@example.com", "-Z")
        #expect(hashes.output == "SHA-256 hash: \(sha256)\nSHA-1 hash: \(sha1)\n")
        #expect(try k.run("find-certificate", "-a", "-p").output.components(separatedBy: "BEGIN CERTIFICATE").count == 3)
        #expect(try k.run("find-certificate", "-c", "Nobody").status == 44)
        #expect(try k.run("import", folder + "/key.pem", "-f", "x509").status != 0)

        // export: the identity as PKCS#12 (opens in openssl), certificates as PEM, keys as PKCS#8.
        #expect(try k.run("export", "-t", "identities", "-f", "pkcs12", "-P", "out", "-o", folder + "/out.p12").status == 0)
        #expect(try openssl(["pkcs12", "-in", "@out.p12", "-passin", "pass:out", "-nodes", "-out", "@out.pem"], in: folder) == 0)
        #expect(try String(contentsOfFile: folder + "/out.pem", encoding: .utf8).contains("CLI Identity"))
        #expect(try k.run("export", "-t", "identities", "-f", "pkcs12", "-P", "out", "-o", folder + "/out.p12").status == 45)
        #expect(try k.run("export", "-t", "certs", "-f", "pemseq", "-o", folder + "/certs.pem").status == 0)
        #expect(try String(contentsOfFile: folder + "/certs.pem", encoding: .utf8).components(separatedBy: "BEGIN CERTIFICATE").count == 3)
        #expect(try k.run("export", "-t", "allKeys", "-f", "pemseq", "-o", folder + "/keys.pem").status == 0)
        #expect(try openssl(["pkey", "-in", "@keys.pem", "-pubout", "-out", "@keys.pub"], in: folder) == 0)
        #expect(try k.run("export", "-t", "certs", "-f", "openssl", "-o", folder + "/x").status != 0)
        #expect(try k.run("export", "-t", "certs", "-f", "pemseq", "-w", "-o", folder + "/x").status != 0)
        #expect(!FileManager.default.fileExists(atPath: folder + "/x"))
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/out.p12")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // delete-identity removes the certificate and its key; delete-certificate the other one.
        #expect(try k.run("delete-identity").status != 0)
        #expect(try k.run("delete-identity", "-c", "Just A Certificate").status == 44)
        #expect(try k.run("delete-identity", "-Z", sha1).output == "identity has been deleted.\n")
        #expect(try k.run("find-identity").output.contains("0 identities found"))
        #expect(!(try k.run("dump-keychain").output.contains("\"keys\"")))
        #expect(try k.run("delete-certificate", "-c", "Just A Certificate").output == "certificate has been deleted.\n")
        #expect(try k.run("find-certificate", "-a").status == 44)
    }

    @Test("create-keypair stores a private key and prints a public key OpenSSL reads; duplicates and bad sizes are refused")
    func createKeyPair() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-keypair-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let k = try CommandRunner()
        defer { k.finish() }
        let made = try k.run("create-keypair", "-l", "deploy signing", "-t", "com.example.deploy")
        #expect(made.status == 0 && made.output.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        try made.output.write(toFile: folder + "/pub.pem", atomically: true, encoding: .utf8)
        #expect(try openssl(["pkey", "-pubin", "-in", "@pub.pem", "-noout"], in: folder) == 0)
        let dump = try k.run("dump-keychain").output
        #expect(dump.contains("\"keys\"") && dump.contains("deploy signing") && dump.contains("com.example.deploy"))
        #expect(try k.run("create-keypair", "-a", "rsa", "-s", "1024", "-x", "-t", "rsa-key").status == 0)
        #expect(try k.run("create-keypair", "-s", "255").status != 0)
        #expect(try k.run("create-keypair", "-a", "dsa").status != 0)
    }
}
