import KeychainModel

/// The names of the Secret portal's backend (`org.freedesktop.impl.portal.Secret`), which
/// xdg-desktop-portal asks for a sandboxed application's secret, and the rules for what it is given.
enum SecretPortal {
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Secret"
    /// The portal's frontend: the only caller the backend answers, since the application id it
    /// passes is the one the sandbox says, not one the application chose.
    static let frontend = "org.freedesktop.portal.Desktop"
    /// The backend interface's version.
    static let version: UInt32 = 1

    /// Each application's secret: a generic password of this service, its account the
    /// application id, in the agent's own access group, `AfterFirstUnlock`, never synced.
    static let service = "org.freedesktop.portal.Secret"
    static let group = AgentGroups.portal
    static let secretByteCount = 64

    /// Whether `id` is an application id as Flatpak and snapd give them: a D-Bus well-known name
    /// (at least two elements of letters, digits, `_` and `-`, none starting with a digit, at most
    /// 255 bytes), the form xdg-desktop-portal passes. The empty id of an unsandboxed program is not one.
    static func isApplicationID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return element.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
        }
    }
}
