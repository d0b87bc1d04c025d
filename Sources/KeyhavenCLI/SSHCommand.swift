import ArgumentParser

/// `keyhaven ssh`: SSH keys kept in a keychain, which `keyhaven-ssh-agent --keychain` offers
/// (docs/ssh.md). The work is keyhaven-pki's (swift-crypto makes the keys).
struct SSHCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh", abstract: "Make, list and delete the SSH keys kept in a keychain; list and revoke approvals.",
        discussion: """
            Keys kept in a keychain are offered by keyhaven-ssh-agent --keychain (the session's agent, \
            keyhaven-ssh-agent.socket). Each is a generic password of the service keyhaven.ssh-key; its \
            access object decides which programs may sign with it (ssh and ssh-keygen, for a new key).
            """,
        subcommands: [SSHNewKey.self, SSHImport.self, SSHList.self, SSHDelete.self, SSHApprovalsCommand.self]).underKeyhaven
}

/// `keyhaven ssh new-key NAME`: a key made in the keychain, its only copy.
package struct SSHNewKey: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "new-key", abstract: "Make an SSH key in a keychain and print its public key line (for authorized_keys).",
        discussion: """
            The key never leaves the keychain (with --tpm, the TPM): the agent signs with it. ssh and ssh-keygen, found on \
            PATH, may use it without asking; any other program asks the user. ssh-add -d and -D do \
            not remove it; keyhaven ssh delete does.
            """)
    @Argument(help: "The key's name: its comment and label.") package var name: String
    @Option(name: .customLong("type"), help: "ed25519 (the default), ecdsa or rsa; with --tpm, ecdsa (P-256).") package var type: String?
    @Option(name: .customShort("b"), help: "ECDSA: 256, 384 or 521; RSA: 2048, 3072 or 4096.") package var bits: Int?
    @Flag(name: .customLong("confirm"), help: "Ask the user before each use, as ssh-add -c.") package var confirm = false
    @Option(name: .customLong("namespace"), help: "Limit the key to signing in this SSHSIG namespace (git, file; repeat for more): it then signs nothing else, logins included.")
    package var namespaces: [String] = []
    @Flag(name: .customLong("tpm"), help: "Make the key inside the TPM (ECDSA P-256, never exportable, never synced).") package var tpm = false
    @Flag(name: .customLong("presence"), help: "Ask for the user at each use: a fingerprint (fprintd), or else the keychain's password (kSecAccessControlUserPresence).")
    package var presence = false
    @Flag(name: .customLong("sync"), help: "Sync the key end to end with the keychain's other devices (kSecAttrSynchronizable); never with --tpm.")
    package var sync = false
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") package var keychain: String?

    package init() {}

    /// The key type asked for, or the default for where the key is made.
    package var keyType: String { type ?? (tpm ? "ecdsa" : "ed25519") }

    package func validate() throws {
        guard ["ed25519", "ecdsa", "rsa"].contains(keyType) else { throw ValidationError("--type is ed25519, ecdsa or rsa") }
        if tpm {
            guard keyType == "ecdsa" else {
                throw ValidationError("the TPM makes ECDSA P-256 keys only: TPM 2.0 has no Ed25519, and Keyhaven keeps no RSA keys in it")
            }
            guard bits == nil || bits == 256 else { throw ValidationError("the TPM makes ECDSA keys of 256 bits (P-256) only") }
            guard !sync else { throw ValidationError("a key inside the TPM never leaves it: --sync and --tpm do not go together") }
        }
        guard !name.isEmpty, !name.contains(where: \.isNewline) else { throw ValidationError("the name is empty or spans lines") }
        guard namespaces.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isNewline) }), namespaces.count <= 64 else {
            throw ValidationError("a namespace is empty or spans lines (at most 64)")
        }
    }

    package func run() throws { try HelperDispatch.run(self) }
}

/// `keyhaven ssh list`: the SSH keys kept in keychains.
package struct SSHList: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the SSH keys kept in keychains: name, type, fingerprint, where, constraints, last use.",
        discussion: """
            One line per key, its fields separated by tabs. The last use is the agent's record since it \
            started: when (ISO 8601, UTC), by which process chain, where to, and whether a prompt, an \
            approval or no prompt (a key that does not confirm) allowed it; "-" when none.
            """)
    @Argument(help: "The keychains (default: the search list).") package var keychains: [String] = []

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}

/// `keyhaven ssh delete NAME`: removes a kept key.
package struct SSHDelete: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an SSH key kept in a keychain, named by its name or fingerprint.",
        discussion: "A key made with new-key has no other copy: it is gone for good.")
    @Argument(help: "The key's name or its SHA256: fingerprint.") package var key: String
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") package var keychain: String?

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}

/// `keyhaven ssh import [FILE...]`: keys from files into the keychain through the session's
/// agent, their passphrases from gnome-keyring's store where it kept them.
package struct SSHImport: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Keep SSH key files in the keychain, through keyhaven-ssh-agent --keychain.",
        discussion: """
            Each file is added with ssh-add to the agent SSH_AUTH_SOCK names, which must be \
            keyhaven-ssh-agent --keychain: the key is then kept in the default keychain. A key's passphrase \
            is taken from the Secret Service where gnome-keyring keeps it (the item whose attribute unique \
            is ssh-store:FILE), else asked for on the terminal. Without files: each ~/.ssh/id_* that has \
            its .pub beside it. One line per file: kept, with its fingerprint, or why not; the status is 1 \
            when any was not kept.
            """)
    @Argument(help: "Private key files (default: ~/.ssh/id_* with a .pub beside them).") package var files: [String] = []

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}
