/// The words a confirmation prompt shows for one signature: who asks (the process chain), with
/// which key, for which destination (the verified host key's fingerprint and the names
/// `known_hosts` gives it), whether through a forwarded agent, and what is signed.
package struct SSHUseDescription: Sendable {
    package let text: String

    /// `chain` names the client and its parents, "ssh (1234) ← git ← bash".
    package init(use: KeyUse, chain: String, knownHosts: KnownHosts) {
        let key = use.comment.isEmpty ? "an SSH key" : "the SSH key \"\(Self.shown(use.comment))\""
        var text = "\(chain) asks to use \(key) (\(SSHPublicKey.fingerprint(of: use.publicBlob)))"
        if let namespace = use.namespace {
            text += namespace == "git" ? " to sign a git commit or tag (namespace \"git\")." : " to sign data in the namespace \"\(Self.shown(namespace))\"."
        } else if let destination = use.destination {
            let names = knownHosts.names(for: destination.hostKey).map(Self.shown)
            let host = names.isEmpty ? "a host not in known_hosts" : names.joined(separator: ", ")
            text += " to log in to \(host), whose host key is \(destination.hostKey.fingerprint)."
        } else {
            text += " for a destination it did not verify (the client bound no session)."
        }
        if use.forwarded { text += " The request comes through an agent forwarded to another host." }
        self.text = text
    }

    /// Text from a client, shown without control characters and at most 200 characters long.
    static func shown(_ text: String) -> String {
        String(text.unicodeScalars.filter { !$0.properties.generalCategory.isControl }.prefix(200).map(Character.init))
    }
}

private extension Unicode.GeneralCategory {
    var isControl: Bool { self == .control || self == .format || self == .lineSeparator || self == .paragraphSeparator }
}
