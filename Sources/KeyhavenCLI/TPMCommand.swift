import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// `keyhaven tpm status`: the TPM the agent reaches (docs/tpm.md).
struct TPMCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm", abstract: "Ask about the TPM the agent uses as the Secure Enclave.",
        discussion: """
            The agent reaches the TPM through the TCTI in KEYHAVEN_TPM (tpm2-tss's syntax: \
            swtpm:host=127.0.0.1,port=2321, device:/dev/tpm0), else the kernel's resource manager \
            (device:/dev/tpmrm0). Every use of the TPM goes through the agent.
            """,
        subcommands: [Status.self]).underKeyhaven

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether a TPM is reachable and how, who made it, and its dictionary-attack protection.")

        func run() throws {
            try perform("tpm status") { () throws(StoreError) in
                let status = try TPMCommand.status(try Session.open())
                printLine("TPM: reachable through \(status.tcti)")
                printLine("Manufacturer: \(status.manufacturer)" + (status.vendor.isEmpty ? "" : " (\(status.vendor))"))
                printLine("Firmware: \(status.firmware) (0x\(hex(status.firmware1)) 0x\(hex(status.firmware2)))")
                printLine("Lockout counter: \(status.failedTries) of \(status.maxTries) failed authorizations; "
                          + "one is forgotten every \(status.recoveryTime) s")
                printLine("Lockout recovery: \(status.lockoutRecovery) s")
                printLine(status.inLockout ? "Locked out: authorizations are refused for up to \(status.recoveryTime) s"
                                           : "Not locked out")
                printLine(status.lockoutAuthorizationSet
                          ? "Lockout authorization: set (only who knows it resets the counter)"
                          : "Lockout authorization: empty (any program that reaches the TPM resets the counter)")
                TPMCommand.warnOfEmptyLockout(status)
            }
        }

        private func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }
    }

    /// The TPM's status, as the agent reads it.
    static func status(_ session: Session) throws(StoreError) -> TPMStatus {
        try session.send(.tpmStatus).tpmStatus()
    }

    /// Warns on standard error while the lockout authorization is empty: the TPM's count of wrong
    /// passwords, the binding's point, is then anyone's to reset (docs/tpm.md).
    static func warnOfEmptyLockout(_ status: TPMStatus) {
        if !status.lockoutAuthorizationSet { printError("keyhaven: warning: " + TPMStatus.emptyLockoutAuthorization) }
    }
}
