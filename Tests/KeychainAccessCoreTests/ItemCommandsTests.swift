import Foundation
import KeychainAccessCore
import KeychainModel
import KeychainTestSupport
import Testing

/// The item commands of Keychain Access against a real agent: an item's details and access
/// list, New Password Item, certificates' details and PEM; and that another program cannot use
/// the keychain's password in place of an item's access object.
@Suite(.freshKeychain(), .serialized)
struct ItemCommandsTests {
    @Test("New Password Item from a URL is an internet password, from a name an application password; keyhaven reads both")
    func newPasswordItem() throws {
        try withAgent { (runner) throws in
            try grantEveryGroup(runner)
            let session = try KeychainAccessSession.open()
            let login = try #require(try session.keychains().first).path
            let web = try session.addPassword(to: login, name: "https://example.org:8443/login", account: "ada", password: Array("pa55".utf8))
            #expect(web.itemClass == .internetPassword && web.location == "https://example.org:8443/login" && web.account == "ada")
            // This test program added them, so they trust it alone (the window's adds trust the keyhaven programs).
            let found = try runner.run("find-internet-password", "-s", "example.org", "-a", "ada", "-P", "8443")
            #expect(found.output.contains("\"ptcl\"<blob>=\"htps\"") && found.output.contains("\"path\"<blob>=\"/login\""), "\(found.output) \(found.error)")
            let app = try session.addPassword(to: login, name: "Backup disk", account: "bob", password: Array("d1sk".utf8))
            #expect(app.itemClass == .genericPassword && app.location == "Backup disk")
            #expect(try runner.run("find-generic-password", "-s", "Backup disk").output.contains("\"acct\"<blob>=\"bob\""))
            #expect(throws: StoreError.self) { try session.addPassword(to: login, name: "  ", account: "x", password: [1]) }
            #expect(throws: StoreError.self) { try session.addPassword(to: login, name: "https://", account: "x", password: [1]) }

            // The item's window: its attributes and who may use it.
            let details = ItemDetails(try session.item(web), keychainPath: login)
            #expect(details.label == "https://example.org:8443/login" && details.account == "ada" && details.hasPassword)
            #expect(details.facts.contains { $0 == ("Where", "https://example.org:8443/login") })
            let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            #expect(!details.allowsEveryProgram && details.trustedPrograms == [me], "\(details.trustedPrograms)")
        }
    }

    @Test("Another program of the user cannot use the keychain's password in place of an item's access object: reveal, edit and delete are refused")
    func onlyAdministratorsAdminister() throws {
        try withAgent { (runner) throws in
            #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
            #expect(try runner.run("add-generic-password", "-a", "ada", "-s", "mail", "-w", "s3cret", "work").status == 0)
            try grantEveryGroup(runner)
            let session = try KeychainAccessSession.open()
            let work = try #require(try session.keychains().first { $0.name == "work" }).path
            let row = try #require(try session.rows(in: work).first)
            func refused(_ attempt: () throws(StoreError) -> Void) {
                do throws(StoreError) {
                    try attempt()
                    Issue.record("a program other than keyhaven's administered an item")
                } catch {
                    #expect(error.code == .authFailed && error.message.contains("only the keyhaven programs"), "\(error)")
                }
            }
            refused { () throws(StoreError) in _ = try session.reveal(row, password: Array("pw".utf8)) }
            refused { () throws(StoreError) in try session.update(row, label: "X", account: "x", comment: "", password: Array("pw".utf8)) }
            refused { () throws(StoreError) in try session.delete(row, password: Array("pw".utf8)) }
            #expect(try runner.run("find-generic-password", "-a", "ada", "-w", "work").output == "s3cret\n")
        }
    }

    @Test("A certificate's subject, issuer, serial, validity, uses and fingerprints are OpenSSL's; its PEM is the same certificate")
    func certificateDetails() throws {
        try withAgent { (runner) throws in
            let folder = try TemporaryFolder.make(prefix: "keyhaven-access-cert")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let made = try CommandRunner.execute("/usr/bin/openssl", [
                "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", folder + "/key.pem",
                "-subj", "/CN=Window Test/O=Keyhaven", "-days", "30", "-addext", "keyUsage=critical,digitalSignature,keyAgreement",
                "-addext", "extendedKeyUsage=clientAuth", "-set_serial", "0x1234ab", "-out", folder + "/cert.pem"], environment: [:])
            #expect(made.status == 0, "\(made.error)")
            #expect(try runner.run("import", folder + "/cert.pem").status == 0)
            try grantEveryGroup(runner)
            let session = try KeychainAccessSession.open()
            let login = try #require(try session.keychains().first).path
            let row = try #require(try session.rows(in: login).first { $0.itemClass == .certificate })
            let info = try session.certificate(row)
            #expect(info.subjectName.contains("CN=Window Test") && info.subjectName.contains("O=Keyhaven"))
            #expect(info.issuerName == info.subjectName)
            #expect(info.serialNumber == [0x12, 0x34, 0xab])
            #expect(info.keyUsageNames == ["Digital Signature", "Key Agreement"] && info.extendedKeyUsageNames == ["Client Authentication"])
            let fingerprint = try CommandRunner.execute("/usr/bin/openssl", ["x509", "-in", folder + "/cert.pem", "-noout", "-fingerprint", "-sha256"],
                                                        environment: [:]).output
            #expect(fingerprint.contains(info.sha256Fingerprint.replacingOccurrences(of: " ", with: ":")), "\(fingerprint) \(info.sha256Fingerprint)")
            #expect(info.sha1Fingerprint.split(separator: " ").count == 20)
            let pem = String(decoding: try session.exportPEM(row), as: UTF8.self)
            #expect(pem == (try String(contentsOfFile: folder + "/cert.pem", encoding: .utf8)))
            #expect(throws: StoreError.self) { try session.exportPKCS12(row, keychainPassword: nil, passphrase: []) }
        }
    }
}

/// New Password Item's meter and generator: libpwquality.
struct PasswordQualityTests {
    @Test("An empty, a short and a dictionary password are weak with libpwquality's reason; a generated one is strong and new each time")
    func strengthAndGenerator() throws {
        #expect(PasswordQuality.rate([]).level == "Weak")
        let short = PasswordQuality.rate(Array("ab1".utf8))
        #expect(short.level == "Weak" && short.reason != nil && short.score == 0)
        let generated = try #require(PasswordQuality.generate())
        let again = try #require(PasswordQuality.generate())
        #expect(generated != again && generated.count >= 12)
        let rating = PasswordQuality.rate(generated)
        #expect(rating.reason == nil && rating.score > 40 && ["Good", "Strong"].contains(rating.level), "\(rating)")
    }
}
