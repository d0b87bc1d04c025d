import Foundation
import KeychainTestSupport
import Testing

/// `keyhaven import-secrets --from csv`: the header layouts of the browsers' and password
/// managers' exports, a dry run, nothing written twice, and bad files.
@Suite(.freshKeychain())
struct ImportSecretsTests {
    /// Each export's header and one row for https://accounts.example.com:8443/login, user ann,
    /// password pw-NAME, as that tool writes them.
    static let exports: [(name: String, csv: String)] = [
        ("chromium", "name,url,username,password,note\naccounts.example.com,https://accounts.example.com:8443/login,ann,pw-chromium,\n"),
        ("firefox", "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n"
            + "\"https://accounts.example.com:8443/login\",\"ann\",\"pw-firefox\",,\"https://accounts.example.com:8443\",\"{1}\",\"1\",\"1\",\"1\"\n"),
        ("bitwarden", "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
            + ",,login,Example,,,0,https://accounts.example.com:8443/login,ann,pw-bitwarden,\n,,note,A note,secret text,,0,,,,\n"),
        ("1password", "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\nExample,https://accounts.example.com:8443/login,ann,pw-1password,,false,false,,\n"),
        ("keepassxc", "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n"
            + "\"Root\",\"Example\",\"ann\",\"pw-keepassxc\",\"https://accounts.example.com:8443/login\",\"\",\"\",\"0\",\"2026-01-01T00:00:00Z\",\"2026-01-01T00:00:00Z\"\n"),
    ]

    private func write(_ text: String, _ name: String) throws -> String {
        let path = TestHome.current!.path + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("Each export's layout: a row with a URL becomes an internet password (server, protocol, port, path, account)",
          arguments: exports.map(\.name))
    func layouts(_ name: String) throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let file = try write(Self.exports.first { $0.name == name }!.csv, name + ".csv")
        let imported = try k.run("import-secrets", "--from", "csv", file)
        #expect(imported.status == 0 && imported.output.hasPrefix("1 password imported"), "\(imported.output)\(imported.error)")
        let found = try k.run("find-internet-password", "-s", "accounts.example.com", "-a", "ann", "-P", "8443", "-p", "/login", "-r", "htps", "-w")
        #expect(found.output == "pw-\(name)\n", "\(found.error)")
    }

    @Test("A dry run writes nothing; a second import writes nothing twice; a row without a URL is a generic password")
    func dryRunAndTwice() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let file = try write("name,url,username,password,note\nSite,https://site.example/,ann,one,\nRouter admin,,admin,two,\n,,x,three,\n",
                             "mixed.csv")
        let dry = try k.run("import-secrets", "--from", "csv", file, "--dry-run")
        #expect(dry.output.hasPrefix("2 passwords would be imported") && dry.output.contains("1 without a URL or a title"))
        #expect(try k.run("find-internet-password", "-s", "site.example").status == 44)
        #expect(try k.run("import-secrets", "--from", "csv", file).output.hasPrefix("2 passwords imported, 0 already there"))
        #expect(try k.run("import-secrets", "--from", "csv", file).output.hasPrefix("0 passwords imported, 2 already there"))
        #expect(try k.run("find-generic-password", "-s", "Router admin", "-a", "admin", "-w").output == "two\n")
    }

    @Test("Bad files: not there, not CSV of a password export, not UTF-8; another source is refused with what exists")
    func badFiles() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("import-secrets", "--from", "csv", "/no/such/file.csv").status != 0)
        let odd = try write("a,b,c\n1,2,3\n", "odd.csv")
        let result = try k.run("import-secrets", "--from", "csv", odd)
        #expect(result.status != 0 && result.error.contains("names no password"))
        let binary = TestHome.current!.path + "/binary.csv"
        try Data([0xFF, 0xFE, 0x00, 0x81]).write(to: URL(fileURLWithPath: binary))
        #expect(try k.run("import-secrets", "--from", "csv", binary).status != 0)
        // A broken quote next to a password: the message never quotes the file.
        let broken = try write("name,url,username,password,note\nA,https://a.example,ann,\"pw\"Zq9secret,\n", "broken.csv")
        let refused = try k.run("import-secrets", "--from", "csv", broken)
        #expect(refused.status != 0 && !refused.error.contains("Zq9") && !refused.error.contains("Z"), "\(refused.error)")
        let other = try k.run("import-secrets", "--from", "lastpass", odd)
        #expect(other.status != 0 && other.error.contains("one of csv, pass, secret-service"))
        #expect(try k.run("import-secrets", "--from", "secret-service", odd).error.contains("takes no file"))
        let notStore = try k.run("import-secrets", "--from", "pass", TestHome.current!.path + "/nothing-here")
        #expect(notStore.status != 0 && notStore.error.contains("is not a password store"))
    }
}
