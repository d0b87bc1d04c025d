import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// `keyhaven ssh approvals`: the standing approvals given at confirming keys' prompts, and
/// their revocation.
package struct SSHApprovalsCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "approvals", abstract: "List or revoke the approvals given at SSH keys' prompts.",
        discussion: """
            A key that confirms each use (ssh-add -c, keyhaven ssh new-key --confirm) asks before each \
            signature. The prompt's middle button approves logins to the same host, or signatures in the \
            same namespace, for keyhaven-ssh-agent's --approval-minutes; or every use by the same process \
            while it runs. Each line: the approval's number, the key, what it allows, until when. The \
            approvals live in the agent's memory: they end with it.
            """)
    @Option(name: .customLong("revoke"), help: "Revoke the approval with this number.") var revoke: UInt64?
    @Flag(name: .customLong("revoke-all"), help: "Revoke every approval.") var revokeAll = false

    package init() {}

    package func validate() throws {
        if revoke != nil && revokeAll { throw ValidationError("give --revoke or --revoke-all, not both") }
    }

    package func run() throws {
        try perform("ssh approvals") { () throws(StoreError) in
            let session = try Session.open()
            let revocation: SSHRevocation? = revokeAll ? .all : revoke.map { .approval($0) }
            let report = try session.send(.sshUses(revoke: revocation)).sshUses()
            guard revocation == nil else { return }
            for approval in report.approvals {
                let key = approval.comment.isEmpty ? approval.key : "\(SSHUseReport.oneLine(approval.comment)) (\(approval.key))"
                let until = approval.expires.map { "until \(Self.time($0))" } ?? "while it runs"
                printLine("\(approval.id)\t\(key)\t\(SSHUseReport.oneLine(approval.scope))\t\(until)")
            }
        }
    }

    /// A date as scripts read it (ISO 8601, UTC).
    static func time(_ date: Date) -> String { date.formatted(.iso8601) }
}
