import Foundation
import KeychainTestSupport
import Testing

/// Logins to a real sshd through `keyhaven-ssh-agent --keychain`: a key made in the keychain, a
/// certificate added with its key, and a key that asks before each use, whose prompt names ssh
/// and the destination's verified host key (and its known_hosts name), and whose denial fails the
/// login.
extension AgentProgramTests {
    @Test func keychainKeysAndACertificateLogInAndAConfirmPromptNamesTheHost() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-ssh-login")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        let (switchable, allow, deny) = try Self.switchablePinentry(in: home)
        try allow.write(toFile: home + "/which", atomically: true, encoding: .utf8)
        // keyhavend reads the user's known_hosts from HOME.
        try withAgent(["--keychain"], extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99", "HOME": home]) { agent in
            let made = try agent.run(Self.keyhaven, ["ssh", "new-key", "login"])
            #expect(made.status == 0, "\(made.error)")
            let confirmed = try agent.run(Self.keyhaven, ["ssh", "new-key", "careful", "--type", "ecdsa", "--confirm"])
            #expect(confirmed.status == 0, "\(confirmed.error)")
            // A certificate signed by a CA the server trusts, for a key whose own line it does not know.
            let ca = try agent.makeKey("ed25519", comment: "ca")
            let certified = try agent.makeKey("ed25519", comment: "certified")
            let signed = try agent.run("/usr/bin/ssh-keygen", ["-q", "-s", ca, "-I", "test", "-n", SSHServer.user, certified + ".pub"])
            #expect(signed.status == 0, "\(signed.error)")

            let server = try SSHServer.start(in: agent.folder, authorizedKeys: [made.output.trimmingCharacters(in: .newlines)],
                                             certificateAuthority: ca + ".pub")
            defer { server.stop() }
            try FileManager.default.copyItem(atPath: agent.folder + "/known_hosts", toPath: home + "/.ssh/known_hosts")

            let login = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(login.status == 0 && login.output == "logged-in\n", "\(login.error)")
            #expect(try String(contentsOfFile: agent.folder + "/sshd.log", encoding: .utf8).contains("Accepted publickey for \(SSHServer.user)"))

            // Only the certificate's key remains offered: its login is the certificate's.
            #expect(try agent.run(Self.keyhaven, ["ssh", "delete", "login"]).status == 0)
            #expect(try agent.sshAdd(certified).status == 0)
            let viaCertificate = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(viaCertificate.status == 0, "\(viaCertificate.error)")
            #expect(try String(contentsOfFile: agent.folder + "/sshd.log", encoding: .utf8).contains("ED25519-CERT"))
            #expect(try agent.sshAdd("-D").status == 0)

            // The confirm key: the server learns it, the prompt names ssh and the host, and a denial fails the login.
            try (confirmed.output).write(toFile: agent.folder + "/authorized_keys", atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: home + "/pinentry.log")
            let asked = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(asked.status == 0, "\(asked.error)")
            let log = try String(contentsOfFile: home + "/pinentry.log", encoding: .utf8)
            let description = try #require(log.split(separator: "\n").first { $0.hasPrefix("SETDESC ") && $0.contains("careful") })
            #expect(description.contains("ssh ("))
            #expect(description.contains(server.hostKeyFingerprint))
            #expect(description.contains("[127.0.0.1]:\(server.port)"))
            try deny.write(toFile: home + "/which", atomically: true, encoding: .utf8)
            #expect(try server.login(agentSocket: agent.socket, environment: agent.environment).status != 0)

            // The prompt's middle button approves this host for the agent's minutes: the next login
            // asks nothing (the denying pinentry is back), and the key's last use says so.
            try Self.standingPinentry(in: home, then: deny).write(toFile: home + "/which", atomically: true, encoding: .utf8)
            #expect(try server.login(agentSocket: agent.socket, environment: agent.environment).status == 0)
            #expect(try String(contentsOfFile: home + "/standing.log", encoding: .utf8).contains("SETNOTOK Allow [127.0.0.1]:\(server.port) for 10 min"))
            #expect(try server.login(agentSocket: agent.socket, environment: agent.environment).status == 0)
            let approvals = try agent.run(Self.keyhaven, ["ssh", "approvals"]).output
            #expect(approvals.contains("\tlogins to [127.0.0.1]:\(server.port) (\(server.hostKeyFingerprint))\tuntil "), "\(approvals)")
            let row = try #require(try agent.run(Self.keyhaven, ["ssh", "list"]).output.split(separator: "\n").first { $0.hasPrefix("careful\t") })
            #expect(row.hasSuffix(" to [127.0.0.1]:\(server.port) (\(server.hostKeyFingerprint)) (approval)"), "\(row)")
        }
    }
}

extension AgentProgramTests {
    /// `ssh-add -h` with a real sshd: the constraint names hosts by their host keys (from the
    /// known_hosts file given with -H), and the login's verified session binding is judged by it.
    @Test func aKeyRestrictedToAnotherHostIsRefusedAndOneRestrictedToThisHostLogsIn() throws {
        try withAgent { agent in
            let elsewhereKey = try agent.makeKey("ed25519", comment: "for-elsewhere")
            let hereKey = try agent.makeKey("ed25519", comment: "for-here")
            let lines = try [elsewhereKey, hereKey].map { try String(contentsOfFile: $0 + ".pub", encoding: .utf8).trimmingCharacters(in: .newlines) }
            let server = try SSHServer.start(in: agent.folder, authorizedKeys: lines, certificateAuthority: nil)
            defer { server.stop() }
            let otherHost = try agent.makeKey("ed25519", comment: "another-host")
            let hosts = agent.folder + "/constraint_hosts"
            try ("testhost \(server.hostKeyLine)\nelsewhere " + String(contentsOfFile: otherHost + ".pub", encoding: .utf8))
                .write(toFile: hosts, atomically: true, encoding: .utf8)

            let restricted = try agent.sshAdd("-H", hosts, "-h", "elsewhere", elsewhereKey)
            #expect(restricted.status == 0, "\(restricted.error)")
            // Offered nowhere but elsewhere: the login to this host finds no key that signs.
            let refused = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(refused.status != 0, "a key restricted to another host logged in: \(refused)")
            #expect(try String(contentsOfFile: agent.folder + "/sshd.log", encoding: .utf8).contains("Accepted publickey") == false)

            #expect(try agent.sshAdd("-H", hosts, "-h", "testhost", hereKey).status == 0)
            let allowed = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(allowed.status == 0 && allowed.output == "logged-in\n", "\(allowed.error)")
            #expect(try String(contentsOfFile: agent.folder + "/sshd.log", encoding: .utf8).contains("Accepted publickey"))
        }
    }

    @Test(.enabled(if: TestTPM.isAvailable, "needs swtpm and tpm2-tools (scripts/bootstrap)"))
    func aKeyInTheTPMLogsInAndSigns() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        try withAgent(["--keychain"], extra: ["KEYHAVEN_TPM": tpm.tcti]) { agent in
            let made = try agent.run(Self.keyhaven, ["ssh", "new-key", "hardware", "--tpm"])
            #expect(made.status == 0, "\(made.error)")
            let line = made.output.trimmingCharacters(in: .newlines)
            #expect(line.hasPrefix("ecdsa-sha2-nistp256 AAAA") && line.hasSuffix(" hardware"))
            let refused = try agent.run(Self.keyhaven, ["ssh", "new-key", "soft", "--tpm", "--type", "ed25519"])
            #expect(refused.status == 64 && refused.error.contains("TPM 2.0 has no Ed25519"), "\(refused.error)")
            let listed = try agent.run(Self.keyhaven, ["ssh", "list"]).output
            #expect(listed.contains("hardware\tecdsa-sha2-nistp256\tSHA256:") && listed.contains("in the TPM, never synced"), "\(listed)")

            let server = try SSHServer.start(in: agent.folder, authorizedKeys: [line], certificateAuthority: nil)
            defer { server.stop() }
            let login = try server.login(agentSocket: agent.socket, environment: agent.environment)
            #expect(login.status == 0 && login.output == "logged-in\n", "\(login.error)")

            try (line + "\n").write(toFile: agent.folder + "/hardware.pub", atomically: true, encoding: .utf8)
            try "a tag".write(toFile: agent.folder + "/message", atomically: true, encoding: .utf8)
            let signed = try agent.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "git", "-f", agent.folder + "/hardware.pub", agent.folder + "/message"])
            #expect(signed.status == 0, "\(signed.error)")
            try ("someone " + line + "\n").write(toFile: agent.folder + "/allowed", atomically: true, encoding: .utf8)
            let verified = try agent.run("/usr/bin/ssh-keygen", ["-Y", "verify", "-f", agent.folder + "/allowed", "-I", "someone", "-n", "git",
                                                                "-s", agent.folder + "/message.sig"], input: "a tag")
            #expect(verified.status == 0, "\(verified.error)")
        }
    }
}

extension AgentProgramTests {
    /// git's own SSH signing (`gpg.format=ssh`) with a key made in the keychain: git runs
    /// `ssh-keygen -Y sign` with the public key, which asks the agent.
    @Test func gitSignsACommitWithAKeyFromTheKeychain() throws {
        try withAgent(["--keychain"]) { agent in
            let made = try agent.run(Self.keyhaven, ["ssh", "new-key", "git-signing", "--namespace", "git"])
            #expect(made.status == 0, "\(made.error)")
            let line = made.output.trimmingCharacters(in: .newlines)
            let publicKey = agent.folder + "/git-signing.pub"
            try (line + "\n").write(toFile: publicKey, atomically: true, encoding: .utf8)
            try ("someone@example.com " + line + "\n").write(toFile: agent.folder + "/allowed_signers", atomically: true, encoding: .utf8)
            let repository = agent.folder + "/repository"
            let git = { (arguments: [String]) throws -> CommandRunner.Result in
                try agent.run("/usr/bin/git", ["-C", repository] + arguments, extra: ["GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
                                                                                      "HOME": agent.folder])
            }
            try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
            #expect(try git(["init", "-q"]).status == 0)
            for (name, value) in [("user.name", "Someone"), ("user.email", "someone@example.com"), ("gpg.format", "ssh"),
                                  ("user.signingkey", publicKey), ("gpg.ssh.allowedSignersFile", agent.folder + "/allowed_signers")] {
                #expect(try git(["config", name, value]).status == 0)
            }
            let committed = try git(["commit", "-q", "--allow-empty", "-S", "-m", "signed by the keychain's key"])
            #expect(committed.status == 0, "\(committed.error)")
            let verified = try git(["verify-commit", "HEAD"])
            #expect(verified.status == 0 && verified.error.contains("Good \"git\" signature for someone@example.com"), "\(verified.error)")
            // Limited to the namespace git: it signs nothing else.
            try "data".write(toFile: agent.folder + "/file", atomically: true, encoding: .utf8)
            #expect(try agent.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "file", "-f", publicKey, agent.folder + "/file"]).status != 0)
            #expect(try agent.run(Self.keyhaven, ["ssh", "list"]).output.contains("signs in git only"))
        }
    }
}
