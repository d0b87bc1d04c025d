import Foundation
import KeychainTestSupport
import Testing

/// The TPM as an ordinary user has it (root only starts swtpm): a bound keychain made, counted,
/// opened and backed up by the user's own agent; and the TPM's lockout counter as another local
/// user finds it through a TCP swtpm, reset while the lockout authorization is empty, not once
/// it is set (docs/tpm.md, "Lockout authorization").
@Suite(.freshKeychain(), .serialized)
struct TPMAsUserTests {
    @Test("An ordinary user's agent binds a keychain to the TPM, which counts the user's wrong password and opens the right one; another local user resets the TPM's count while its lockout authorization is empty, and cannot once it is set")
    func boundKeychainAsUser() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-tpmuser"))
        defer { session.remove() }
        let other = try LocalUser.make("keyhaven-attacker")
        var environment = session.environment
        environment["KEYHAVEN_TPM"] = tpm.tcti
        func keyhaven(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
            try session.user.run(session.binaries.path("keyhaven"), arguments, environment: environment)
        }
        let created = try keyhaven("create-keychain", "-p", "user pw", "--tpm", "work")
        #expect(created.status == 0, "\(created)")
        #expect(try keyhaven("add-generic-password", "-s", "svc", "-a", "acct", "-w", "bound as a user", "work").status == 0)
        #expect(try keyhaven("lock-keychain", "work").status == 0)
        let wrong = try keyhaven("unlock-keychain", "-p", "not the pw", "work")
        #expect(wrong.status == 51 && wrong.error.contains("the TPM counted it: 1 of"), "\(wrong)")
        #expect(try keyhaven("unlock-keychain", "-p", "user pw", "work").status == 0)
        #expect(try keyhaven("find-generic-password", "-s", "svc", "-w", "work").output == "bound as a user\n")
        let backup = try keyhaven("backup-keychain", "-p", "user pw", "work", session.home + "/work-backup")
        #expect(backup.status == 0, "\(backup)")
        #expect(try keyhaven("tpm", "status").output.contains("Lockout counter: 1 of"))
        #expect(try keyhaven("agent", "stop").status == 0)

        // Another local user, through the same TCP port (swtpm serves one connection at a time).
        let tools = ["PATH": "/usr/bin:/bin", "TPM2TOOLS_TCTI": tpm.tcti]
        let reset = try other.run("/usr/bin/tpm2_dictionarylockout", ["--clear-lockout"], environment: tools)
        #expect(reset.status == 0, "\(reset)")
        #expect(try keyhaven("tpm", "status").output.contains("Lockout counter: 0 of"))
        #expect(try keyhaven("agent", "stop").status == 0)
        #expect(try tpm.tools("tpm2_changeauth", "-c", "lockout", "owner's lockout secret").status == 0)
        let refused = try other.run("/usr/bin/tpm2_dictionarylockout", ["--clear-lockout"], environment: tools)
        #expect(refused.status != 0, "\(refused)")
    }
}
