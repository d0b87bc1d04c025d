import FoundationEssentials

/// The host names a `known_hosts` file gives a host key (OpenSSH's sshd(8), "SSH_KNOWN_HOSTS FILE
/// FORMAT"), so a prompt can say "github.com" beside the key's fingerprint. Hashed names
/// (`|1|...`) name nothing here; revoked and certificate-authority lines are skipped.
package struct KnownHosts: Sendable {
    private let lines: [Substring]

    package init(contents: String) {
        lines = contents.split(whereSeparator: \.isNewline)
    }

    /// The user's `~/.ssh/known_hosts`, or an empty list when it cannot be read.
    package static func userFile(home: String? = ProcessInfo.processInfo.environment["HOME"]) -> KnownHosts {
        guard let home, let data = FileManager.default.contents(atPath: home + "/.ssh/known_hosts") else { return KnownHosts(contents: "") }
        return KnownHosts(contents: String(decoding: data, as: UTF8.self))
    }

    /// The names of the lines whose key is `key`, in file order, without duplicates.
    package func names(for key: SSHPublicKey) -> [String] {
        let encoded = Data(key.blob).base64EncodedString()
        var names: [String] = []
        for line in lines {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 3, !fields[0].hasPrefix("#"), !fields[0].hasPrefix("@"), fields[2] == encoded else { continue }
            for name in fields[0].split(separator: ",") where !name.hasPrefix("|") && !name.hasPrefix("!") {
                let shown = String(name)
                if !names.contains(shown) { names.append(shown) }
            }
        }
        return names
    }
}
