import Foundation
import KeychainTestSupport
import KeyhavenTPM
import Testing

/// `keyhaven tpm status` against a real TPM 2.0 (swtpm), through the agent, which owns the
/// connection; no TPM, and a TPM that goes away and comes back.
@Suite(.freshKeychain(), .serialized)
struct TPMStatusTests {
    @Test("The manufacturer, vendor, firmware and dictionary-attack parameters are the TPM's own, as tpm2-tools reads them")
    func statusIsTheTPMs() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        // Set before the agent holds the TPM: swtpm serves one connection at a time.
        let setup = try tpm.tools("tpm2_dictionarylockout", "--setup-parameters", "--max-tries=5", "--recovery-time=7", "--lockout-recovery-time=11")
        #expect(setup.status == 0, "\(setup.error)")
        let fixed = try tpm.tools("tpm2_getcap", "properties-fixed").output
        #expect(fixed.contains("TPM2_PT_MANUFACTURER:\n  raw: 0x49424D00\n  value: \"IBM\""))
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        let status = try runner.run("tpm", "status")
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output == """
            TPM: reachable through \(tpm.tcti)
            Manufacturer: IBM (SW   TPM)
            Firmware: 8217.4131.22.13878 (0x20191023 0x00163636)
            Lockout counter: 0 of 5 failed authorizations; one is forgotten every 7 s
            Lockout recovery: 11 s
            Not locked out
            Lockout authorization: empty (any program that reaches the TPM resets the counter)

            """, "\(status.output)")
        #expect(status.error.contains("warning: the TPM's lockout authorization is empty") && status.error.contains("tpm2_changeauth -c lockout"),
                "\(status.error)")
        #expect(fixed.contains("raw: 0x20191023"))
    }

    @Test("No TPM: the command says which TCTI it tried, with errSecNotAvailable's status; a TPM that goes away is said, and found again when it is back")
    func absentAndBack() throws {
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = "swtpm:host=127.0.0.1,port=\(try TestPostgres.freePort())"
        let none = try runner.run("tpm", "status")
        #expect(none.status == 53 && none.output.isEmpty, "\(none.status) \(none.output)")
        #expect(none.error.contains("no TPM reachable through swtpm:host=127.0.0.1") || none.error.contains("no TPM answers through"), "\(none.error)")
        runner.finish()

        let tpm = try TestTPM()
        defer { tpm.remove() }
        var second = try CommandRunner()
        second.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { second.finish() }
        #expect(try second.run("tpm", "status").status == 0)
        tpm.stop()
        let gone = try second.run("tpm", "status")
        #expect(gone.status == 53 && gone.error.contains("keyhaven: tpm status:"), "\(gone.error)")
        try tpm.start()
        let back = try second.run("tpm", "status")
        #expect(back.status == 0 && back.output.hasPrefix("TPM: reachable through \(tpm.tcti)"), "\(back.error)")
    }

    @Test("While the TPM's lockout authorization is empty, tpm status, create-keychain --tpm and set-keychain-settings --tpm warn and name the command that sets it; once it is set, tpm status says so and binding warns no more")
    func lockoutAuthorization() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        var runner = try CommandRunner()
        runner.extraEnvironment["KEYHAVEN_TPM"] = tpm.tcti
        defer { runner.finish() }
        let created = try runner.run("create-keychain", "-p", "pw", "--tpm", "first")
        #expect(created.status == 0 && created.error.contains("tpm2_changeauth -c lockout NEW-AUTHORIZATION"), "\(created.error)")
        #expect(try runner.run("create-keychain", "-p", "pw", "second").status == 0)
        let bound = try runner.run("set-keychain-settings", "--tpm", "-p", "pw", "second")
        #expect(bound.status == 0 && bound.error.contains("lockout authorization is empty"), "\(bound.error)")
        let unbound = try runner.run("set-keychain-settings", "--no-tpm", "-p", "pw", "second")
        #expect(unbound.status == 0 && unbound.error.isEmpty, "freeing warns of nothing: \(unbound.error)")
        runner.finish()

        // swtpm serves one connection at a time: set while no agent holds it.
        let set = try tpm.tools("tpm2_changeauth", "-c", "lockout", "lockout secret")
        #expect(set.status == 0, "\(set.error)")
        let status = try runner.run("tpm", "status")
        #expect(status.output.contains("Lockout authorization: set (only who knows it resets the counter)\n") && status.error.isEmpty,
                "\(status.output) \(status.error)")
        let again = try runner.run("set-keychain-settings", "--tpm", "-p", "pw", "second")
        #expect(again.status == 0 && again.error.isEmpty, "\(again.error)")
        let third = try runner.run("create-keychain", "-p", "", "--tpm", "third")
        #expect(third.status == 0 && third.error.isEmpty, "\(third.error)")
    }

    @Test("The TPM's response codes become the errors a keychain reports: lockout and a wrong authorization said as such, the connection as unreachable")
    func responseCodes() {
        #expect(TPMError("x", rc: 0x921).code == .lockout)
        #expect(TPMError("x", rc: 0x98e).code == .authFailed)     // TPM_RC_AUTH_FAIL for session 1
        #expect(TPMError("x", rc: 0x9a2).code == .authFailed)     // TPM_RC_BAD_AUTH for session 1
        #expect(TPMError("x", rc: 0xa000a).code == .unreachable)  // the TCTI's I/O error
        #expect(TPMError("x", rc: 0x101).code == .failed)          // TPM_RC_FAILURE
        #expect(TPMError("unsealing", rc: 0x921).message.hasPrefix("unsealing: "))
        #expect(TPMError("x", rc: 0x921).storeError.code.appleStatus == -25293)
    }
}
