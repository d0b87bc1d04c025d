import Foundation
import KeychainStore
import KeychainTestSupport
import Testing

/// `import` and `export` of key files in security(1)'s formats, checked with the real `openssl`.
@Suite(.freshKeychain(), .enabled(if: (try? Shell.run("/usr/bin/env", ["sh", "-c", "command -v openssl"])) == 0,
                                  "needs the openssl command (scripts/bootstrap installs it)"))
struct KeyFileCommandTests {
    func openssl(_ arguments: [String], in folder: String) throws -> Int32 {
        try Shell.run("/usr/bin/env", ["openssl"] + arguments.map { $0.hasPrefix("@") ? folder + "/" + $0.dropFirst() : $0 })
    }

    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test("Keys import from OpenSSL's files (plain and encrypted) and export as openssl, bsafe, pkcs8 and wrapped openssl")
    func keyFiles() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-key-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "@ec.pem"], in: folder) == 0)
        #expect(try openssl(["pkey", "-in", "@ec.pem", "-pubout", "-out", "@ec.pub"], in: folder) == 0)
        #expect(try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes-256-cbc", "-pass", "pass:file pass",
                             "-out", "@rsa-enc.pem"], in: folder) == 0)
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("import", folder + "/ec.pem").output == "1 key imported.\n")
        #expect(try k.run("import", folder + "/ec.pem").status == 45)
        // An encrypted key: the passphrase on standard input; a wrong one is errSecAuthFailed.
        #expect(try k.run("import", folder + "/rsa-enc.pem", "-P", "-", input: "wrong\n").status == 51)
        #expect(try k.run("import", folder + "/rsa-enc.pem", "-P", "-", input: "file pass\n").output == "1 key imported.\n")
        #expect(try k.run("import", folder + "/ec.pem", "-f", "pkcs12", "-P", "x").status == 87)   // errSecUnknownFormat

        // Two private keys: a one-key format is errSecParam (exit 206) and writes nothing; a PEM sequence holds both.
        #expect(try k.run("export", "-t", "privKeys", "-f", "openssl", "-o", folder + "/two.pem").status == 206)
        #expect(try k.run("export", "-t", "privKeys", "-f", "pkcs8", "-P", "x", "-o", folder + "/two.pem").status == 206)
        #expect(!FileManager.default.fileExists(atPath: folder + "/two.pem"))
        let all = try k.run("export", "-t", "privKeys", "-f", "pemseq", "-p")
        #expect(all.status == 0 && all.output.components(separatedBy: "-----BEGIN").count == 3, "\(all.error)")
        let wrapped = try k.run("export", "-t", "privKeys", "-f", "pemseq", "-P", "seq pass")
        #expect(wrapped.output.components(separatedBy: "BEGIN ENCRYPTED PRIVATE KEY").count == 3)
        try Data(wrapped.output.utf8).write(to: URL(fileURLWithPath: folder + "/seq.pem"))
        #expect(try openssl(["pkey", "-in", "@seq.pem", "-passin", "pass:seq pass", "-noout"], in: folder) == 0)
    }

    @Test("A key imported with -x never leaves: export finds nothing to export")
    func nonExtractable() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-key-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "@ec.pem"], in: folder) == 0)
        #expect(try openssl(["pkey", "-in", "@ec.pem", "-pubout", "-out", "@ec.pub"], in: folder) == 0)
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("import", folder + "/ec.pem", "-x").status == 0)
        #expect(try k.run("export", "-t", "privKeys", "-f", "openssl", "-o", folder + "/out.pem").status == 44)
        #expect(!FileManager.default.fileExists(atPath: folder + "/out.pem"))
        #expect(try k.run("export", "-t", "privKeys", "-f", "pkcs8", "-P", "p", "-o", folder + "/out.p8").status == 44)
        // Importing a private key stores no public key item (as security(1)).
        #expect(try k.run("export", "-t", "pubKeys", "-p").status == 44)
    }

    @Test("One private key exported as openssl, bsafe, pkcs8 and wrapped openssl opens in OpenSSL as the same key")
    func oneKeyEveryFormat() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-key-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "@rsa.pem"], in: folder) == 0)
        #expect(try openssl(["pkey", "-in", "@rsa.pem", "-pubout", "-out", "@rsa.pub"], in: folder) == 0)
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("import", folder + "/rsa.pem").status == 0)
        let cases: [([String], String, [String])] = [
            (["-f", "openssl"], "", ["-inform", "DER"]),
            (["-f", "openssl", "-p"], "RSA PRIVATE KEY", []),
            (["-f", "bsafe", "-p"], "BEGIN PRIVATE KEY", []),
            (["-f", "pkcs8", "-P", "pk8"], "", ["-inform", "DER", "-passin", "pass:pk8"]),
            (["-f", "openssl", "-w", "-P", "trad"], "Proc-Type: 4,ENCRYPTED", ["-passin", "pass:trad"]),
        ]
        for (index, (options, marker, opensslOptions)) in cases.enumerated() {
            let file = folder + "/out\(index)"
            #expect(try k.run(["export", "-t", "privKeys"] + options + ["-o", file]).status == 0, "\(options)")
            if !marker.isEmpty { #expect(text(file).contains(marker), "\(options)") }
            #expect(try openssl(["pkey", "-in", file] + opensslOptions + ["-pubout", "-out", "@back.pub"], in: folder) == 0, "\(options)")
            #expect(text(folder + "/back.pub") == text(folder + "/rsa.pub"), "\(options)")
        }
        // pkcs8 without a passphrase asks for one; an empty one is errSecPassphraseRequired (exit 84) and writes nothing.
        #expect(try k.run("export", "-t", "privKeys", "-f", "pkcs8", "-o", folder + "/none", input: "").status == 84)
        #expect(try k.run("export", "-t", "privKeys", "-f", "pkcs8", "-P", "-", "-o", folder + "/none", input: "\n").status == 84)
        #expect(!FileManager.default.fileExists(atPath: folder + "/none"))
    }
}
