import Foundation
import KeychainAccessCore
import KeychainModel
import KeyhavenAgentClient
import KeyhavenSSHAgent
import Testing

/// The SSH Keys page's lines, from kept keys' items and the agent's report.
struct SSHKeysSummaryTests {
    static let blob: [UInt8] = {
        var writer = SSHWriter()
        writer.text("ssh-ed25519")
        writer.string([UInt8](repeating: 7, count: 32))
        return writer.bytes
    }()

    @Test("Each kept key: name, type, fingerprint, where, and its last use or none; each approval: key, scope, until; text of clients on one line")
    func lines() throws {
        let made = SSHKeyItem(publicBlob: Self.blob, comment: "deploy", confirm: true, origin: .made, inTPM: false, namespaces: [])
        let fingerprint = made.account
        let attributes = made.attributes
        let report = SSHUseReport(
            approvals: [.init(id: 5, key: fingerprint, comment: "deploy", scope: "logins to host\n (SHA256:h)", granted: Date(timeIntervalSince1970: 0),
                              expires: Date(timeIntervalSince1970: 1_800_000_000)),
                        .init(id: 6, key: fingerprint, comment: "", scope: "every use by python3 (9) while it runs", granted: Date(), expires: nil)],
            lastUses: [.init(key: fingerprint, comment: "deploy", at: Date(timeIntervalSince1970: 1_800_000_000), by: "ssh (1) ← bash",
                             target: "host (SHA256:h)", allowed: "approval")])
        let summary = SSHKeysSummary(items: [(made, attributes, "login"), (made, attributes.merging(["sync": .number(1)]) { $1 }, "work")],
                                     report: report)
        #expect(summary.keys.count == 2)
        #expect(summary.keys[0].line == "deploy — ssh-ed25519 \(fingerprint) — keychain login (made in the keychain, this device only) — "
                + "last used 2027-01-15 08:00 by ssh (1) ← bash to host (SHA256:h) (approval)")
        #expect(summary.keys[1].place == "keychain work (made in the keychain, synchronizable)")
        #expect(summary.approvals.map(\.id) == [5, 6])
        #expect(summary.approvals[0].line == "deploy (\(fingerprint)): logins to host  (SHA256:h), until 2027-01-15 08:00")
        #expect(summary.approvals[1].line == "\(fingerprint): every use by python3 (9) while it runs, while it runs")

        let tpm = SSHKeyItem(publicBlob: Self.blob, comment: "", confirm: false, origin: .made, inTPM: true, namespaces: [])
        let unused = SSHKeysSummary(items: [(tpm, tpm.attributes, "login")], report: SSHUseReport(approvals: [], lastUses: []))
        #expect(unused.keys[0].line.hasPrefix("(no name) — ssh-ed25519 "))
        #expect(unused.keys[0].line.hasSuffix("keychain login (in the TPM, never synced) — not used since the agent started"))
    }
}
