import Foundation
import KeychainStore
import KeychainTestSupport
import Testing

/// `keyhaven backup-keychain`: a keychain moved to another machine (another keychain home, so
/// another device key) from the command line.
@Suite(.freshKeychain())
struct BackupKeychainCommandTests {
    static let classes = ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"]

    /// A runner for another machine: its own home and its own agent.
    func anotherMachine() throws -> (runner: CommandRunner, home: String) {
        let home = try TemporaryFolder.make(prefix: "keyhaven-new-machine")
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_HOME"] = home
        return (runner, home)
    }

    /// One generic password in each accessibility class, named after it, stored in `path`.
    func addEveryClass(to path: String) throws {
        let database = try KeychainDatabase(path: path, home: KeychainHome(path: TestHome.current!.path))
        try database.unlock(password: Array("pw on both".utf8))
        for protection in Self.classes {
            let attributes: [String: AttributeValue] = ["acct": .string(protection), "svce": .string("moving"), "pdmn": .string(protection),
                                                        "agrp": .string("moving.group")]
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data("secret \(protection)".utf8)),
                                 caller: Caller(accessGroups: ["moving.group"]))
        }
    }

    @Test("A keychain with every accessibility class, backed up by the command, is adopted elsewhere with its password: migratable items only")
    func movesToAnotherMachine() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("create-keychain", "-p", "pw on both", "travels").status == 0)
        let live = TestHome.current!.path + "/travels.keychain-db"
        try addEveryClass(to: live)
        let folder = try TemporaryFolder.make(prefix: "keyhaven-backup")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let backup = folder + "/travels.keychain-db"
        let made = try k.run("backup-keychain", "-p", "pw on both", "travels", backup)
        #expect(made.status == 0, "\(made.error)")
        #expect(((try? FileManager.default.attributesOfItem(atPath: backup))?[.posixPermissions] as? Int) == 0o600)
        // Never over an existing file.
        let again = try k.run("backup-keychain", "-p", "pw on both", "travels", backup)
        #expect(again.status != 0 && again.error.contains("already exists"))

        let (other, otherHome) = try anotherMachine()
        defer { other.finish(); try? FileManager.default.removeItem(atPath: otherHome) }
        #expect(try other.run("list-keychains").status == 0)
        // A raw copy of the live file opens nothing there, even with the password; the message names the command.
        try FileManager.default.copyItem(atPath: live, toPath: otherHome + "/raw.keychain-db")
        let raw = try other.run("unlock-keychain", "-p", "pw on both", "raw")
        #expect(raw.status != 0 && raw.error.contains("keyhaven backup-keychain"), "\(raw.error)")
        #expect(try other.run("find-generic-password", "-a", "dk", "-w", "raw").status != 0)
        // The backup, placed in the keychain folder: a wrong password is 51; the right one adopts it.
        try FileManager.default.copyItem(atPath: backup, toPath: otherHome + "/travels.keychain-db")
        #expect(try other.run("unlock-keychain", "-p", "wrong", "travels").status == 51)
        let unlocked = try other.run("unlock-keychain", "-p", "pw on both", "travels")
        #expect(unlocked.status == 0, "\(unlocked.error)")
        for protection in Self.classes {
            let found = try other.run("find-generic-password", "-a", protection, "-s", "moving", "-w", "travels")
            if ["ak", "ck", "dk"].contains(protection) {
                #expect(found.output == "secret \(protection)\n", "\(protection): \(found.error)")
            } else {
                #expect(found.status == 44, "\(protection)")
            }
        }
        // Adopted: locked, its Always items open with this machine's key alone; named by path too.
        #expect(try other.run("lock-keychain", "travels").status == 0)
        #expect(try other.run("find-generic-password", "-a", "dk", "-s", "moving", "-w", otherHome + "/travels.keychain-db").output == "secret dk\n")
        #expect(try other.run("find-generic-password", "-a", "ak", "-s", "moving", "-w", "travels").status == 36)
    }

    @Test("backup-keychain refuses a keychain without a password, a locked one, a wrong password and a missing keychain, and writes nothing")
    func refusals() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-backup")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try k.run("create-keychain", "-p", "", "open").status == 0)
        let open = try k.run("backup-keychain", "-p", "", "open", folder + "/open.keychain-db")
        #expect(open.status != 0 && open.error.contains("without a password"), "\(open.error)")
        #expect(try k.run("create-keychain", "-p", "pw", "shut").status == 0)
        #expect(try k.run("lock-keychain", "shut").status == 0)
        let locked = try k.run("backup-keychain", "-p", "pw", "shut", folder + "/shut.keychain-db")
        #expect(locked.status == 36 && locked.error.contains("unlock"), "\(locked.error)")
        #expect(try k.run("unlock-keychain", "-p", "pw", "shut").status == 0)
        let wrong = try k.run("backup-keychain", "-p", "not pw", "shut", folder + "/shut.keychain-db")
        #expect(wrong.status == 51, "\(wrong.error)")
        #expect(try k.run("backup-keychain", "-p", "pw", "nowhere", folder + "/nowhere.keychain-db").status != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}
