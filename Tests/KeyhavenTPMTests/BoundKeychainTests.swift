import Foundation
import KeychainTestSupport
import Testing

/// Keychains bound to the TPM (`create-keychain --tpm`, `set-keychain-settings --tpm|--no-tpm`)
/// against real TPMs (swtpm): a copy of the whole keychain home, device key included, opens
/// nothing under another TPM even with the right password; the TPM counts wrong passwords and
/// locks out.
@Suite(.freshKeychain(), .serialized)
struct BoundKeychainTests {
    @Test("A bound keychain opens with its password on its TPM; a copy of the home under a second TPM does not, with the right password, and its backup does; the first TPM opens the copy")
    func copyOpensOnlyOnItsTPM() throws {
        let first = try TestTPM()
        defer { first.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = first.tcti
        #expect(try runner.run("create-keychain", "-p", "right horse", "--tpm", "work").status == 0)
        #expect(try runner.run("add-generic-password", "-s", "svc", "-a", "acct", "-w", "bound secret", "work").status == 0)
        let info = try runner.run("show-keychain-info", "work")
        #expect(info.output.hasSuffix(" no-timeout tpm unlocked\n"), "\(info.output)")
        #expect(try runner.run("lock-keychain", "work").status == 0)
        let locked = try runner.run("find-generic-password", "-s", "svc", "-w", "work")
        #expect(locked.status != 0 && locked.output.isEmpty)
        let wrong = try runner.run("unlock-keychain", "-p", "wrong horse", "work")
        #expect(wrong.status == 51 && wrong.error.contains("the TPM counted it"), "\(wrong.status) \(wrong.error)")
        #expect(try runner.run("unlock-keychain", "-p", "right horse", "work").status == 0)
        #expect(try runner.run("find-generic-password", "-s", "svc", "-w", "work").output == "bound secret\n")
        // A backup is not bound: its password alone opens it anywhere.
        let backup = TestHome.current!.path + "/work-backup.keychain-db"
        #expect(try runner.run("backup-keychain", "-p", "right horse", "work", backup).status == 0)
        runner.finish()

        // The whole home, device key and all, under another TPM.
        let copy = try TemporaryFolder.make(prefix: "keyhaven-copy")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: TestHome.current!.path, toPath: copy)
        let second = try TestTPM()
        defer { second.remove() }
        var thief = try CommandRunner()
        thief.extraEnvironment = ["KEYHAVEN_TPM": second.tcti, "KEYHAVEN_HOME": copy]
        let elsewhere = try thief.run("unlock-keychain", "-p", "right horse", "work")
        #expect(elsewhere.status == 93 && elsewhere.error.contains("bound to another TPM"), "\(elsewhere.status) \(elsewhere.error)")
        #expect(try thief.run("find-generic-password", "-s", "svc", "-w", "work").output.isEmpty)
        #expect(try thief.run("unlock-keychain", "-p", "right horse", "work-backup").status == 0)
        #expect(try thief.run("find-generic-password", "-s", "svc", "-w", "work-backup").output == "bound secret\n")
        #expect(!(try thief.run("show-keychain-info", "work-backup").output.contains(" tpm")))
        thief.finish()

        var owner = try CommandRunner()
        owner.extraEnvironment = ["KEYHAVEN_TPM": first.tcti, "KEYHAVEN_HOME": copy]
        defer { owner.finish() }
        #expect(try owner.run("unlock-keychain", "-p", "right horse", "work").status == 0)
        #expect(try owner.run("find-generic-password", "-s", "svc", "-w", "work").output == "bound secret\n")
    }

    @Test("On a TPM without a resource manager, each agent flushes what it loaded when it stops: four agents in turn each unlock a bound keychain; agents killed before they could flush leave a TPM without room, said as such (not as another TPM's), and once another program flushes it the keychain opens")
    func agentsComeAndGo() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        #expect(try runner.run("create-keychain", "-p", "pw", "--tpm", "work").status == 0)
        #expect(try runner.run("add-generic-password", "-s", "svc", "-a", "acct", "-w", "bound secret", "work").status == 0)
        // Binding a keychain with a password, with no -p and no terminal: it says what it needs.
        #expect(try runner.run("create-keychain", "-p", "pw2", "plain").status == 0)
        let unasked = try runner.run("set-keychain-settings", "--tpm", "plain")
        #expect(unasked.status != 0 && unasked.error.contains("--tpm needs the keychain's password: give it with -p"), "\(unasked.error)")
        #expect(try runner.run("agent", "stop").status == 0)
        func transientObjects() throws -> Int {
            try tpm.tools("tpm2_getcap", "handles-transient").output.split(separator: "\n").filter { $0.contains("0x80") }.count
        }
        for cycle in 1...4 {
            let unlocked = try runner.run("unlock-keychain", "-p", "pw", "work")
            #expect(unlocked.status == 0, "agent \(cycle): \(unlocked.error)")
            #expect(try runner.run("find-generic-password", "-s", "svc", "-w", "work").output == "bound secret\n", "agent \(cycle)")
            #expect(try runner.run("agent", "stop").status == 0)
            #expect(try transientObjects() == 0, "agent \(cycle) left objects in the TPM")
        }
        // Agents killed with their storage keys loaded: the TPM fills up.
        for _ in 1...3 {
            _ = try runner.run("unlock-keychain", "-p", "pw", "work")
            let status = try runner.run("agent", "status").output
            let pid = status.split(separator: " ").first { $0.hasSuffix(")") }.flatMap { Int32($0.dropLast()) }
            if let pid { kill(pid, SIGKILL) }
            Thread.sleep(forTimeInterval: 0.3)
        }
        let full = try runner.run("unlock-keychain", "-p", "pw", "work")
        #expect(full.status != 0 && !full.error.contains("another TPM") && full.error.contains("cannot serve it now"), "\(full.status) \(full.error)")
        #expect(try runner.run("agent", "stop").status == 0)
        let flushed = try tpm.tools("tpm2_flushcontext", "-t")
        #expect(flushed.status == 0, "\(flushed.error)")
        let opened = try runner.run("unlock-keychain", "-p", "pw", "work")
        #expect(opened.status == 0, "\(opened.error)")
        #expect(try runner.run("find-generic-password", "-s", "svc", "-w", "work").output == "bound secret\n")
    }

    @Test("Past the TPM's limit of wrong passwords the right one is refused, exit status 75 and \"locked out\" with the time; it opens once the lockout passes")
    func lockout() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        // Low limits, set before the agent holds the TPM (swtpm serves one connection at a time).
        // The TPM forgives one failure per recovery time: it must outlast the commands between
        // the failures and the refusal, which take seconds each where swtpm makes keys slowly.
        let setup = try tpm.tools("tpm2_dictionarylockout", "--setup-parameters", "--max-tries=2", "--recovery-time=20", "--lockout-recovery-time=10")
        #expect(setup.status == 0, "\(setup.error)")
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        #expect(try runner.run("create-keychain", "-p", "right", "--tpm", "guarded").status == 0)
        #expect(try runner.run("lock-keychain", "guarded").status == 0)
        #expect(try runner.run("unlock-keychain", "-p", "wrong", "guarded").status == 51)
        let second = try runner.run("unlock-keychain", "-p", "wrong", "guarded")
        #expect(second.status == 75 && second.error.contains("locked out"), "\(second.status) \(second.error)")
        let refused = try runner.run("unlock-keychain", "-p", "right", "guarded")
        #expect(refused.status == 75, "\(refused.status) \(refused.error)")
        #expect(refused.error.contains("the TPM is locked out") && refused.error.contains("for up to 20 s"), "\(refused.error)")
        #expect(try runner.run("show-keychain-info", "guarded").output.hasSuffix(" tpm locked\n"))
        Thread.sleep(forTimeInterval: 21)
        let opened = try runner.run("unlock-keychain", "-p", "right", "guarded")
        #expect(opened.status == 0, "\(opened.error)")
    }

    @Test("The passwordless default keychain, bound, is unreadable from a copy under another TPM; --no-tpm needs the password and frees a keychain, whose copy then opens")
    func defaultKeychainAndFreeing() throws {
        let first = try TestTPM()
        defer { first.remove() }
        let second = try TestTPM()
        defer { second.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = first.tcti
        #expect(try runner.run("add-generic-password", "-s", "svc", "-a", "acct", "-w", "default secret").status == 0)
        let bind = try runner.run("set-keychain-settings", "--tpm")
        #expect(bind.status == 0, "\(bind.error)")
        #expect(try runner.run("show-keychain-info").output.contains(" tpm unlocked"))
        #expect(try runner.run("find-generic-password", "-s", "svc", "-w").output == "default secret\n")
        // A keychain with a password: --no-tpm with a wrong one changes nothing.
        #expect(try runner.run("create-keychain", "-p", "pw", "--tpm", "work").status == 0)
        #expect(try runner.run("add-generic-password", "-s", "w", "-a", "a", "-w", "work secret", "work").status == 0)
        #expect(try runner.run("set-keychain-settings", "--no-tpm", "-p", "nope", "work").status == 51)
        #expect(try runner.run("show-keychain-info", "work").output.contains(" tpm "))
        let free = try runner.run("set-keychain-settings", "--no-tpm", "-p", "pw", "work")
        #expect(free.status == 0, "\(free.error)")
        #expect(!(try runner.run("show-keychain-info", "work").output.contains(" tpm")))
        runner.finish()

        let copy = try TemporaryFolder.make(prefix: "keyhaven-copy")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: TestHome.current!.path, toPath: copy)
        var thief = try CommandRunner()
        thief.extraEnvironment = ["KEYHAVEN_TPM": second.tcti, "KEYHAVEN_HOME": copy]
        defer { thief.finish() }
        let stolen = try thief.run("find-generic-password", "-s", "svc", "-w")
        #expect(stolen.status != 0 && stolen.output.isEmpty && stolen.error.contains("bound to another TPM"), "\(stolen.error)")
        // The freed keychain is the home's again: its device key and password open the copy.
        #expect(try thief.run("unlock-keychain", "-p", "pw", "work").status == 0)
        #expect(try thief.run("find-generic-password", "-s", "w", "-w", "work").output == "work secret\n")
    }
}
