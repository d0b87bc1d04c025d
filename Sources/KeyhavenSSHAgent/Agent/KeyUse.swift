/// One signature a client asks for, as the agent shows it to the user and checks it: which key,
/// where it is going, and what it signs.
package struct KeyUse: Sendable {
    /// The key's public blob (or its certificate's), as the client named it.
    package let publicBlob: [UInt8]
    package let comment: String
    /// Whether the key asks the user before each use (`ssh-add -c`, `keyhaven ssh new-key --confirm`).
    package let confirm: Bool
    /// The connection's last verified binding: the host the signature is for (nil: the client
    /// bound none, as `ssh-keygen -Y sign` and older clients do not).
    package let destination: SessionBinding?
    /// Whether any binding of the connection says it is forwarded.
    package let forwarded: Bool
    /// The namespace of an SSHSIG signature (PROTOCOL.sshsig): `git` for a commit, `file`.
    package let namespace: String?

    package init(publicBlob: [UInt8], comment: String, confirm: Bool, destination: SessionBinding?, forwarded: Bool, namespace: String?) {
        (self.publicBlob, self.comment, self.confirm) = (publicBlob, comment, confirm)
        (self.destination, self.forwarded, self.namespace) = (destination, forwarded, namespace)
    }

    /// The namespace of `data` when it is what SSHSIG signs: the six bytes `SSHSIG`, then the
    /// namespace, a reserved string, the hash's name and the message's hash.
    static func sshsigNamespace(of data: [UInt8]) -> String? {
        let magic = Array("SSHSIG".utf8)
        guard data.starts(with: magic) else { return nil }
        var reader = SSHReader(data[magic.count...])
        guard let namespace = try? reader.text(), (try? reader.string()) != nil, (try? reader.text()) != nil,
              (try? reader.string()) != nil, reader.isAtEnd else { return nil }
        return namespace
    }
}
