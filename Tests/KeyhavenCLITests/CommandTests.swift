import Foundation
import KeychainStore
import KeychainTestSupport
import KeyhavenAgentClient
import Testing

/// The `keyhaven` command end to end: real binaries, a real agent, a temporary home and runtime
/// folder per test.
@Suite(.freshKeychain())
struct CommandTests {
    @Test("The lock cycle across processes: create, add, lock, find fails 36, wrong unlock 51, unlock, find")
    func lockCycle() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("create-keychain", "-p", "pw", "work").status == 0)
        #expect(try k.run("add-generic-password", "-a", "alice", "-s", "svc", "-w", "s3cret", "work").status == 0)
        #expect(try k.run("find-generic-password", "-a", "alice", "-s", "svc", "-w", "work").output == "s3cret\n")
        #expect(try k.run("lock-keychain", "work").status == 0)
        let locked = try k.run("find-generic-password", "-a", "alice", "-s", "svc", "-w", "work")
        #expect(locked.status == 36)
        #expect(locked.error.contains("User interaction is not allowed."))
        #expect(try k.run("unlock-keychain", "-p", "wrong", "work").status == 51)
        #expect(try k.run("unlock-keychain", "-p", "pw", "work").status == 0)
        #expect(try k.run("find-generic-password", "-a", "alice", "-s", "svc", "-w", "work").output == "s3cret\n")
    }

    @Test("Auto-lock in the agent: after the timeout without a call, the next command finds it locked")
    func autoLockAcrossProcesses() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("create-keychain", "-p", "pw", "timed").status == 0)
        #expect(try k.run("add-generic-password", "-a", "a", "-w", "x", "timed").status == 0)
        #expect(try k.run("set-keychain-settings", "-t", "1", "timed").status == 0)
        #expect(try k.run("find-generic-password", "-a", "a", "-w", "timed").status == 0)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try k.run("show-keychain-info", "timed").output.hasSuffix(" timeout=1s locked\n"))
        #expect(try k.run("find-generic-password", "-a", "a", "-w", "timed").status == 36)
    }

    @Test("Exit statuses are the OSStatus's low byte: 44 not found, 45 duplicate")
    func exitStatuses() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "a", "-s", "s", "-w", "x").status == 0)
        let duplicate = try k.run("add-generic-password", "-a", "a", "-s", "s", "-w", "x")
        #expect(duplicate.status == 45)
        #expect(duplicate.error.contains("already exists"))
        #expect(try k.run("add-generic-password", "-a", "a", "-s", "s", "-w", "y", "-U").status == 0)
        #expect(try k.run("find-generic-password", "-a", "a", "-s", "s", "-w").output == "y\n")
        let missing = try k.run("find-generic-password", "-a", "nobody")
        #expect(missing.status == 44)
        #expect(missing.error == "keyhaven: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n")
    }

    @Test("find shows attributes; -g puts the password on standard error only; secrets never appear otherwise")
    func findOutput() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "alice", "-s", "svc", "-l", "My label", "-j", "a comment", "-c", "aapl",
                          "-w", "TOPSECRET").status == 0)
        let plain = try k.run("find-generic-password", "-s", "svc")
        #expect(plain.output.contains("\"acct\"<blob>=\"alice\""))
        #expect(plain.output.contains("\"labl\"<blob>=\"My label\""))
        #expect(plain.output.contains("\"crtr\"<uint32>=\(Int64(0x6161_706C))"))
        #expect(!plain.output.contains("TOPSECRET") && !plain.error.contains("TOPSECRET"))
        let shown = try k.run("find-generic-password", "-s", "svc", "-g")
        #expect(!shown.output.contains("TOPSECRET"))
        #expect(shown.error == "password: \"TOPSECRET\"\n")
        let json = try k.run("find-generic-password", "-s", "svc", "--json")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
        #expect((parsed?.first?["attributes"] as? [String: Any])?["acct"] as? String == "alice")
        #expect(parsed?.first?["password"] == nil)
    }

    @Test("Internet passwords: add, find by server and protocol, delete")
    func internetPasswords() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-internet-password", "-a", "ann", "-s", "mail.example.com", "-r", "imps", "-P", "993", "-w", "pw").status == 0)
        #expect(try k.run("find-internet-password", "-s", "mail.example.com", "-r", "imps", "-w").output == "pw\n")
        #expect(try k.run("find-internet-password", "-s", "mail.example.com", "-r", "htps").status == 44)
        #expect(try k.run("find-internet-password", "-s", "mail.example.com", "-r", "toolong").status != 0)
        let deleted = try k.run("delete-internet-password", "-s", "mail.example.com")
        #expect(deleted.status == 0 && deleted.output.contains("password has been deleted."))
        #expect(try k.run("find-internet-password", "-s", "mail.example.com").status == 44)
    }

    @Test("delete-generic-password removes the first match only")
    func deleteFirstMatch() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "one", "-s", "svc", "-w", "1").status == 0)
        #expect(try k.run("add-generic-password", "-a", "two", "-s", "svc", "-w", "2").status == 0)
        #expect(try k.run("delete-generic-password", "-s", "svc").status == 0)
        #expect(try k.run("find-generic-password", "-a", "one").status == 44)
        #expect(try k.run("find-generic-password", "-a", "two", "-w").output == "2\n")
    }

    @Test("Keychains: list, default, search list, info, settings, password change, delete")
    func keychainManagement() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let home = TestHome.current!.path
        #expect(try k.run("create-keychain", "-p", "", "alpha").status == 0)
        #expect(try k.run("list-keychains").output == "    \"\(home)/login.keychain-db\"\n    \"\(home)/alpha.keychain-db\"\n")
        #expect(try k.run("default-keychain", "-s", "alpha").status == 0)
        #expect(try k.run("default-keychain").output == "    \"\(home)/alpha.keychain-db\"\n")
        #expect(try k.run("default-keychain", "-s", "missing").status == UInt8(truncatingIfNeeded: -25294))
        #expect(try k.run("add-generic-password", "-a", "in-alpha", "-w", "x").status == 0)
        #expect(try k.run("find-generic-password", "-a", "in-alpha", "alpha").status == 0)
        #expect(try k.run("find-generic-password", "-a", "in-alpha", "\(home)/login.keychain-db").status == 44)
        #expect(try k.run("set-keychain-settings", "-t", "600", "alpha").status == 0)
        #expect(try k.run("show-keychain-info", "alpha").output == "Keychain \"\(home)/alpha.keychain-db\" timeout=600s unlocked\n")
        #expect(try k.run("set-keychain-password", "-p", "newpw", "alpha").status == 0)
        #expect(try k.run("lock-keychain", "alpha").status == 0)
        #expect(try k.run("find-generic-password", "-a", "in-alpha", "-w", "alpha").status == 36)
        #expect(try k.run("set-keychain-password", "-o", "wrong", "-p", "x", "alpha").status == 51)
        #expect(try k.run("unlock-keychain", "-p", "newpw", "alpha").status == 0)
        #expect(try k.run("list-keychains", "-s", "alpha").status == 0)
        #expect(try k.run("list-keychains").output == "    \"\(home)/alpha.keychain-db\"\n")
        #expect(try k.run("delete-keychain", "alpha").status == 0)
        #expect(!FileManager.default.fileExists(atPath: "\(home)/alpha.keychain-db"))
        #expect(try k.run("default-keychain").output == "    \"\(home)/login.keychain-db\"\n")
    }

    @Test("dump-keychain lists every item; -d adds the passwords")
    func dump() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "g", "-s", "svc", "-w", "gpw").status == 0)
        #expect(try k.run("add-internet-password", "-a", "i", "-s", "host", "-w", "ipw").status == 0)
        let plain = try k.run("dump-keychain")
        #expect(plain.output.components(separatedBy: "class: ").count == 3)
        #expect(!plain.output.contains("gpw"))
        let withData = try k.run("dump-keychain", "-d")
        #expect(withData.output.contains("\"gpw\"") && withData.output.contains("\"ipw\""))
    }

    @Test("dump-keychain lists keys too, and never their material, even with -d")
    func dumpListsKeys() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "g", "-s", "svc", "-w", "gpw").status == 0)
        let agent = AgentKeychain(path: TestHome.current!.keychainPath, socket: AgentSocket(path: k.runtime + "/keyhaven/agent.sock"),
                                  home: TestHome.current!.path)
        let material = Data(repeating: 0x5C, count: 97)
        let key = NewItem(itemClass: .key, attributes: ["kcls": .number(1), "type": .number(73), "bsiz": .number(256),
                                                         "klbl": .data(Data(repeating: 1, count: 20)), "atag": .string("cli-key")],
                          secret: material)
        _ = try agent.add(key, caller: Caller(accessGroups: [AccessGroupConfiguration.defaultGroup]))
        for arguments in [["dump-keychain"], ["dump-keychain", "-d"], ["dump-keychain", "--json", "-d"]] {
            let output = try k.run(arguments).output
            #expect(output.contains("keys") && output.contains("cli-key"), "\(arguments)")
            #expect(!output.contains("5C5C5C5C") && !output.contains("\\\\\\\\"), "\(arguments): key material listed")
        }
    }

    @Test("Passwords from standard input with '-' and when -w is the last option without a terminal")
    func passwordsFromStandardInput() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "a", "-s", "dash", "-w", "-", input: "from stdin\n").status == 0)
        #expect(try k.run("find-generic-password", "-s", "dash", "-w").output == "from stdin\n")
        #expect(try k.run("add-generic-password", "-a", "a", "-s", "last", "-w", input: "asked\n").status == 0)
        #expect(try k.run("find-generic-password", "-s", "last", "-w").output == "asked\n")
        #expect(try k.run("create-keychain", "piped", input: "kc pw\n").status == 0)
        #expect(try k.run("lock-keychain", "piped").status == 0)
        #expect(try k.run("unlock-keychain", "piped", input: "kc pw\n").status == 0)
    }

    @Test("Bad usage is a message and a non-zero status, never a crash")
    func badUsage() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let unknown = try k.run("no-such-subcommand")
        #expect(unknown.status != 0 && !unknown.error.isEmpty)
        #expect(try k.run("add-generic-password", "-c", "toolong", "-w", "x").status != 0)
        #expect(try k.run("find-generic-password", "-a", "x", "/nonexistent/k.keychain-db").status == UInt8(truncatingIfNeeded: -25294))
        #expect(try k.run("--help").output.contains("find-generic-password"))
        #expect(try k.run("--generate-completion-script", "bash").output.contains("keyhaven"))
        // A subcommand's own errors and help name it under keyhaven, whichever way it was parsed.
        let badOption = try k.run("find-generic-password", "--bogus")
        #expect(badOption.status == 64)
        #expect(badOption.error.contains("Unknown option '--bogus'") && badOption.error.contains("keyhaven find-generic-password"))
        let missing = try k.run("delete-keychain")
        #expect(missing.status == 64 && missing.error.contains("keyhaven delete-keychain"))
        #expect(try k.run("find-generic-password", "--help").output.contains("USAGE: keyhaven find-generic-password"))
        #expect(try k.run("help", "find-generic-password").output.contains("USAGE: keyhaven find-generic-password"))
    }

    @Test("delete-keychain deletes only keychains; create-keychain makes its folders 0700 and leaves an existing one's mode alone")
    func keychainFilesOnly() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-shared")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        chmod(folder, 0o755)
        let notes = folder + "/notes.keychain-db"
        try Data("not a keychain".utf8).write(to: URL(fileURLWithPath: notes))
        let refused = try k.run("delete-keychain", notes)
        #expect(refused.status != 0 && refused.error.contains("is not a keychain"), "\(refused)")
        #expect(FileManager.default.fileExists(atPath: notes))
        #expect(try k.run("create-keychain", "-p", "pw", folder + "/team.keychain-db").status == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int) == 0o755)
        #expect(try k.run("create-keychain", "-p", "pw", folder + "/made/deeper/own.keychain-db").status == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: folder + "/made/deeper")[.posixPermissions] as? Int) == 0o700)
        #expect(try k.run("delete-keychain", folder + "/team.keychain-db").status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder + "/team.keychain-db"))
    }

    @Test("The first command says once that the default keychain has no password, and how to set one")
    func passwordNotice() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let first = try k.run("add-generic-password", "-a", "a", "-w", "x")
        #expect(first.status == 0 && first.error.contains("has no password") && first.error.contains("keyhaven set-keychain-password"))
        let second = try k.run("add-generic-password", "-a", "b", "-w", "y")
        #expect(second.status == 0 && !second.error.contains("has no password"))
    }
}
