import Foundation
import KeychainStore
import KeychainTestSupport
import Testing

/// What a bound keychain's earlier state gives an attacker about its later one (docs/tpm.md):
/// the header (with the seal) or the keybag of a copy from before, spliced into a copy from
/// after a binding or a password change, opens nothing and answers nothing; a backup, the one
/// unbound copy, needs the password, which the TPM counts.
@Suite(.freshKeychain(), .serialized)
struct BoundKeychainRekeyTests {
    @Test("Binding and freeing replace every key, the index and Always classes' too: the header and keybag of a copy from before, spliced into the file after, read no item and find no account")
    func bindingRenewsEveryKey() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        #expect(try runner.run("create-keychain", "-p", "pw", "plain").status == 0)
        runner.finish()
        let path = TestHome.current!.path + "/plain.keychain-db"
        try addEveryClass(to: path, password: "pw")
        let before = try snapshot(path, as: "before")
        try expectFound("dk", in: "before", runner)  // the copy itself opens

        let bound = try runner.run("set-keychain-settings", "--tpm", "-p", "pw", "plain")
        #expect(bound.status == 0, "\(bound.error)")
        runner.finish()
        try splice(header: before, keybag: true, into: path, as: "bound-spliced")
        try expectNothingOpens("bound-spliced", runner)

        #expect(try runner.run("set-keychain-settings", "--no-tpm", "-p", "pw", "plain").status == 0)
        runner.finish()
        try splice(header: before, keybag: true, into: path, as: "freed-spliced")
        try expectNothingOpens("freed-spliced", runner)
        // The keychain itself lost nothing.
        try expectFound("dk", in: "plain", runner)
        #expect(try runner.run("unlock-keychain", "-p", "pw", "plain").status == 0)
        try expectFound("ak", in: "plain", runner)
    }

    @Test("A password set on a bound keychain seals a new secret and replaces every key: the header and seal from before (which open with no password), spliced into the file after, read nothing; a backup needs the password, and the TPM counts a wrong one")
    func backupCountsAndRekeys() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        #expect(try runner.run("create-keychain", "-p", "", "open").status == 0)
        runner.finish()
        let path = TestHome.current!.path + "/open.keychain-db"
        try addEveryClass(to: path, password: nil)
        #expect(try runner.run("set-keychain-settings", "--tpm", "open").status == 0)
        runner.finish()
        let before = try snapshot(path, as: "before")
        try expectFound("dk", in: "before", runner)  // the copy itself opens

        let set = try runner.run("set-keychain-password", "-o", "", "-p", "new horse", "open")
        #expect(set.status == 0, "\(set.error)")
        runner.finish()
        try splice(header: before, keybag: false, into: path, as: "spliced")
        try expectNothingOpens("spliced", runner)

        // A backup: the wrong password is the TPM's to count; the right one writes it.
        let folder = try TemporaryFolder.make(prefix: "keyhaven-backup")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try runner.run("lock-keychain", "open").status == 0)
        #expect(try runner.run("unlock-keychain", "-p", "new horse", "open").status == 0)
        let guessed = try runner.run("backup-keychain", "-p", "old horse", "open", folder + "/guessed")
        #expect(guessed.status == 51 && guessed.error.contains("the TPM counted it: 1 of"), "\(guessed.error)")
        #expect(try runner.run("tpm", "status").output.contains("Lockout counter: 1 of"))
        #expect(try runner.run("backup-keychain", "-p", "new horse", "open", folder + "/backup").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["backup"])
        try expectFound("dk", in: "open", runner)
    }

    /// Adds one item of each migratable and device-only class (its data is its account), in a
    /// process of its own without the agent: the keychain is not bound yet.
    private func addEveryClass(to path: String, password: String?) throws {
        let steps = (password.map { ["unlock:\($0)"] } ?? []) + ["add:dk:dk", "add:dku:dku", "add:ak:ak", "add:ck:ck"]
        let (status, output) = HelperProcess.finish(try HelperProcess.start(["script", path] + steps, environment: ["KEYHAVEN_AGENT": "off"]))
        #expect(status == 0 && output == Array(repeating: "0", count: steps.count).joined(separator: " "), "\(output)")
    }

    /// A consistent copy of the keychain at `path`, in the home under `name`.
    private func snapshot(_ path: String, as name: String) throws -> String {
        let copy = TestHome.current!.path + "/\(name).keychain-db"
        let connection = try SQLiteConnection(path: path, create: false)  // statements hold it unowned
        try connection.prepare("VACUUM INTO ?").run([.text(copy)])
        return copy
    }

    /// A copy of `path` whose header (the `keychain` table: parameters, MAC and seal) and, with
    /// `keybag`, whose wrapped keys are those of the file at `header`: an attacker's splice.
    private func splice(header: String, keybag: Bool, into path: String, as name: String) throws {
        let spliced = try snapshot(path, as: name)
        let connection = try SQLiteConnection(path: spliced, create: false)
        try connection.prepare("ATTACH ? AS earlier").run([.text(header)])
        let tables = keybag ? ["keychain", "keybag"] : ["keychain"]
        for table in tables {
            try connection.execute("DELETE FROM main.\(table); INSERT INTO main.\(table) SELECT * FROM earlier.\(table)")
        }
        try connection.execute("DETACH earlier")
    }

    /// The item of `account` is found, its attributes decrypted (the helper's items trust the
    /// helper alone with their secrets, so the command reads their attributes).
    private func expectFound(_ account: String, in keychain: String, _ runner: CommandRunner) throws {
        let found = try runner.run("find-generic-password", "-a", account, keychain)
        #expect(found.status == 0 && found.output.contains("\"acct\"<blob>=\"\(account)\""), "\(keychain): \(found.error)")
    }

    /// Neither Always class's item is found in `keychain`: no account answers, nothing decrypts.
    private func expectNothingOpens(_ keychain: String, _ runner: CommandRunner) throws {
        for account in ["dk", "dku"] {
            let found = try runner.run("find-generic-password", "-a", account, keychain)
            #expect(found.status != 0 && !found.output.contains("\"\(account)\""), "\(keychain): \(found.output)")
        }
    }
}
