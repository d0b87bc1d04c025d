import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient
import KeyhavenSSHAgent

/// The SSH Keys page: the SSH keys kept in the keychains (``SSHKeyItem``) with each one's last use,
/// and the approvals the user gave at confirming keys' prompts, which the page revokes. The last
/// uses and approvals are keyhavend's record since it started (docs/ssh.md, "Approvals").
package struct SSHKeysSummary: Sendable, Equatable {
    /// One kept key.
    package struct Key: Sendable, Equatable {
        package let name: String
        package let type: String
        package let fingerprint: String
        /// Where it is: "keychain login (added by ssh-add, this device only)".
        package let place: String
        /// Its last use in words, or "not used since the agent started".
        package let lastUse: String

        /// The key's line on the page.
        package var line: String { "\(name) — \(type) \(fingerprint) — \(place) — \(lastUse)" }
    }

    /// One standing approval.
    package struct Approval: Sendable, Equatable {
        package let id: UInt64
        package let line: String
    }

    package let keys: [Key]
    package let approvals: [Approval]

    /// The page from the kept keys' items (with their keychains' names) and the agent's report.
    package init(items: [(item: SSHKeyItem, attributes: [String: AttributeValue], keychain: String)], report: SSHUseReport) {
        keys = items.map { entry in
            let item = entry.item
            let origin = item.inTPM ? "in the TPM, never synced" : item.origin == .made ? "made in the keychain" : "added by ssh-add"
            let synced = item.inTPM ? "" : entry.attributes[.synchronizable] == .number(1) ? ", synchronizable" : ", this device only"
            let use = report.lastUses.first { $0.key == item.account }.map { use in
                "last used \(ItemBrowser.text(date: use.at)) by \(SSHUseReport.oneLine(use.by)) to \(SSHUseReport.oneLine(use.target)) (\(use.allowed))"
            } ?? "not used since the agent started"
            var reader = SSHReader(item.publicBlob)
            return Key(name: item.comment.isEmpty ? "(no name)" : SSHUseReport.oneLine(item.comment), type: (try? reader.text()) ?? "unknown",
                       fingerprint: item.account, place: "keychain \(entry.keychain) (\(origin)\(synced))", lastUse: use)
        }
        approvals = report.approvals.map { approval in
            let key = approval.comment.isEmpty ? approval.key : "\(SSHUseReport.oneLine(approval.comment)) (\(approval.key))"
            let until = approval.expires.map { "until " + ItemBrowser.text(date: $0) } ?? "while it runs"
            return Approval(id: approval.id, line: "\(key): \(SSHUseReport.oneLine(approval.scope)), \(until)")
        }
    }
}

extension KeychainAccessSession {
    /// The SSH Keys page, read now: the kept keys of every keychain that can be read (a locked
    /// one shows none), and the agent's approvals and last uses.
    package func sshKeys() throws(StoreError) -> SSHKeysSummary {
        var items: [(item: SSHKeyItem, attributes: [String: AttributeValue], keychain: String)] = []
        for keychain in try keychains() {
            do {
                let found = try session.items(matching: SSHKeyItem.query(), in: keychain.path, withSecrets: false)
                items += found.compactMap { stored in SSHKeyItem(attributes: stored.attributes).map { ($0, stored.attributes, keychain.name) } }
            } catch where error.code == .interactionNotAllowed {
                continue
            }
        }
        let report = try session.send(.sshUses(revoke: nil)).sshUses()
        return SSHKeysSummary(items: items, report: report)
    }

    /// Revokes the approval `id`, or every approval when nil.
    package func revokeSSHApproval(_ id: UInt64?) throws(StoreError) {
        _ = try session.send(.sshUses(revoke: id.map { .approval($0) } ?? .all))
    }
}

extension KeychainAccessModel {
    /// The SSH Keys page now and what it says above its lists: nothing, that no key is kept, or
    /// why it cannot be read.
    package func sshPage() -> (summary: SSHKeysSummary?, message: String) {
        guard let session else { return (nil, message ?? "The keychain agent is not reachable.") }
        do throws(StoreError) {
            let summary = try session.sshKeys()
            return (summary, summary.keys.isEmpty ? "No SSH key is kept in a keychain that is unlocked." : "")
        } catch {
            return (nil, Self.say(error))
        }
    }

    /// Revokes the approval `id` (every one when nil); the error to show, nil when done.
    package func revokeSSHApproval(_ id: UInt64?) -> String? {
        guard let session else { return message ?? "The keychain agent is not reachable." }
        do throws(StoreError) {
            try session.revokeSSHApproval(id)
            return nil
        } catch {
            return Self.say(error)
        }
    }
}
