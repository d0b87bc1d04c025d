import FoundationEssentials

/// The access object a synced copy is given where it arrives, when its access group asks for one.
///
/// Access objects name this device's programs by their digests, so they never sync, and a copy
/// without one trusts every program. That is macOS's rule for synced items and stays the rule for
/// most groups; an SSH key kept in the keychain is the exception, since on the device that made it
/// only OpenSSH signs with it unasked: its copies trust OpenSSH's `ssh` and `ssh-keygen` as
/// installed on the receiving device, and any other program is asked about.
package enum ReplicaAccess {
    /// The access group of SSH key items (`keyhaven ssh new-key`, `keyhaven-ssh-agent --keychain`).
    package static let sshKeys = "com.keyhaven.ssh"
    /// Where the receiving device's OpenSSH programs are looked for.
    package static let openSSHPrograms = ["/usr/bin/ssh", "/usr/bin/ssh-keygen"]

    /// The access object for a copy in `group`, its programs named by path (to be hashed on this
    /// device); nil when copies of the group keep macOS's rule.
    package static func access(forGroup group: String) -> ItemAccess? {
        guard group == sshKeys else { return nil }
        return ItemAccess(applications: openSSHPrograms.map { TrustedApplication(path: $0, digest: Data()) })
    }

    /// The access object for a copy with `attributes`, when its group asks for one.
    package static func access(for attributes: [String: AttributeValue]) -> ItemAccess? {
        guard case .string(let group)? = attributes[.accessGroup] else { return nil }
        return access(forGroup: group)
    }
}
