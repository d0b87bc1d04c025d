import Foundation
import KeychainTestSupport
import Testing

/// `keyhaven-ssh-agent --keychain`: keys kept in the default keychain, used through each key
/// item's access object, across agents, and never from a locked keychain without the user.
extension AgentProgramTests {
    static let keyhaven = CommandRunner.products.appendingPathComponent("keyhaven").path

    /// A program that is not OpenSSH asks the agent for a signature with the key of `publicKey`
    /// (a .pub file): the reply's message number (14: a signature, 5: a failure).
    static let signingClient = """
        import base64, os, socket, struct, sys
        blob = base64.b64decode(open(sys.argv[1]).read().split()[1])
        def string(b): return struct.pack(">I", len(b)) + b
        body = bytes([13]) + string(blob) + string(b"data") + struct.pack(">I", 0)
        s = socket.socket(socket.AF_UNIX); s.connect(os.environ["SSH_AUTH_SOCK"])
        s.sendall(struct.pack(">I", len(body)) + body)
        header = s.recv(4, socket.MSG_WAITALL); reply = s.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)
        print(reply[0])
        """

    @Test func keysKeptInTheKeychainOutliveTheAgentAndAskForOtherPrograms() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-kept")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let (switchable, pinentry, deny) = try Self.switchablePinentry(in: prompts)
        try deny.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
        let client = prompts + "/client.py"
        try Self.signingClient.write(toFile: client, atomically: true, encoding: .utf8)

        try withAgent(["--keychain"], extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99"]) { agent in
            let kept = try agent.makeKey("ed25519", comment: "kept")
            let brief = try agent.makeKey("ecdsa", comment: "brief")
            #expect(try agent.sshAdd(kept).status == 0)
            #expect(try agent.sshAdd("-t", "600", brief).status == 0)
            let item = try agent.run(Self.keyhaven, ["find-generic-password", "-s", "keyhaven.ssh-key"])
            #expect(item.status == 0, "\(item.error)")
            #expect(item.output.contains("\"kept\""))
            let message = agent.folder + "/message"
            try "a commit".write(toFile: message, atomically: true, encoding: .utf8)
            // ssh-keygen beside the ssh-add that added the key is trusted with it: no prompt.
            #expect(try agent.sign(message, key: kept).status == 0)
            #expect(!FileManager.default.fileExists(atPath: prompts + "/deny.log"))

            // Another program asks the user, who denies, then allows.
            #expect(try agent.run("/usr/bin/python3", [client, kept + ".pub"]).output == "5\n")
            #expect(try String(contentsOfFile: prompts + "/deny.log", encoding: .utf8).contains("python3"))
            try pinentry.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
            #expect(try agent.run("/usr/bin/python3", [client, kept + ".pub"]).output == "14\n")

            // A new agent on the same keychain offers the kept key, not the one with a lifetime.
            try withAgent(["--keychain"]) { (other: Running) throws in
                let listed = try other.sshAdd("-l")
                #expect(listed.status == 0)
                #expect(listed.output.contains(" kept (ED25519)"))
                #expect(!listed.output.contains("brief"))
                #expect(try other.sign(message, key: kept).status == 0)
            }

            // -D removes the keys clients added, from the keychain too.
            #expect(try agent.sshAdd("-D").status == 0)
            #expect(try agent.sshAdd("-l").status == 1)
            #expect(try agent.run(Self.keyhaven, ["find-generic-password", "-s", "keyhaven.ssh-key"]).status == 44)
        }
    }

    @Test func aKeyInALockedKeychainAsksToUnlockAndFailsWhenDeclined() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-locked")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let pinentry = try ScriptedPinentry.write(in: prompts)
        // The default keychain has a password; the agent's keyhavend starts with it locked.
        let setUp = try CommandRunner()
        defer {
            _ = try? CommandRunner.execute(Self.keyhaven, ["agent", "stop"], environment: setUp.environment)
            try? FileManager.default.removeItem(atPath: setUp.runtime)
        }
        let created = try CommandRunner.execute(Self.keyhaven, ["create-keychain", "-p", "ssh password", "ssh"], environment: setUp.environment)
        #expect(created.status == 0, "\(created.error)")
        #expect(try CommandRunner.execute(Self.keyhaven, ["default-keychain", "-s", "ssh"], environment: setUp.environment).status == 0)

        try withAgent(["--keychain"], extra: ["KEYHAVEN_PINENTRY": pinentry, "DISPLAY": ":99"]) { agent in
            let key = try agent.makeKey("ed25519", comment: "guarded")
            // Adding to the locked keychain asks to unlock it.
            try "ssh password".write(toFile: prompts + "/pin", atomically: true, encoding: .utf8)
            let added = try agent.sshAdd(key)
            #expect(added.status == 0, "\(added.error)")
            #expect(try String(contentsOfFile: prompts + "/pinentry.log", encoding: .utf8).contains("\"ssh-add\" asks to unlock the keychain"))
            try FileManager.default.removeItem(atPath: prompts + "/pinentry.log")

            #expect(try agent.run(Self.keyhaven, ["lock-keychain", "ssh"]).status == 0)
            // Listed while locked (read before), but a signature asks to unlock: a wrong password fails it.
            #expect(try agent.sshAdd("-l").output.contains(" guarded (ED25519)"))
            let message = agent.folder + "/message"
            try "data".write(toFile: message, atomically: true, encoding: .utf8)
            try "not the password".write(toFile: prompts + "/pin", atomically: true, encoding: .utf8)
            #expect(try agent.sign(message, key: key).status != 0)
            #expect(try String(contentsOfFile: prompts + "/pinentry.log", encoding: .utf8).contains("\"ssh-keygen\" asks to unlock the keychain"))
            #expect(try agent.run(Self.keyhaven, ["show-keychain-info", "ssh"]).output.contains(" locked"))
            try "ssh password".write(toFile: prompts + "/pin", atomically: true, encoding: .utf8)
            let signed = try agent.sign(message, key: key)
            #expect(signed.status == 0, "\(signed.error)")
        }
    }
}

extension AgentProgramTests {
    /// The session's agent as systemd starts it: the socket passed as descriptor 3 (LISTEN_FDS),
    /// left in place when the agent stops, since systemd owns it.
    @Test func aSocketSystemdPassesIsServed() throws {
        let runner = try CommandRunner()
        let folder = try TemporaryFolder.make(prefix: "keyhaven-ssh-activated")
        defer {
            _ = try? CommandRunner.execute(Self.keyhaven, ["agent", "stop"], environment: runner.environment)
            try? FileManager.default.removeItem(atPath: runner.runtime)
            try? FileManager.default.removeItem(atPath: folder)
        }
        let socket = folder + "/ssh"
        // Started from a shell that leaves it running. It inherits the test's blocked SIGTERM,
        // which the agent unblocks.
        let started = try CommandRunner.execute("/bin/sh", ["-c", "/usr/bin/systemd-socket-activate -l '\(socket)' '\(Self.agent)' -D --keychain "
                                                           + "</dev/null >/dev/null 2>&1 & echo $!"],
                                                environment: runner.environment)
        let pid = try #require(Int32(started.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(pid, SIGKILL) }
        var environment = runner.environment
        environment["SSH_AUTH_SOCK"] = socket
        var listed = try CommandRunner.execute("/usr/bin/ssh-add", ["-l"], environment: environment)
        for _ in 0..<100 where listed.status == 2 {
            usleep(50_000)
            listed = try CommandRunner.execute("/usr/bin/ssh-add", ["-l"], environment: environment)
        }
        #expect(listed.status != 2, "\(listed.error)")
        let key = folder + "/id_ed25519"
        #expect(try CommandRunner.execute("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "activated", "-f", key],
                                          environment: environment).status == 0)
        #expect(try CommandRunner.execute("/usr/bin/ssh-add", [key], environment: environment).status == 0)
        #expect(try CommandRunner.execute("/usr/bin/ssh-add", ["-l"], environment: environment).output.contains(" activated (ED25519)"))
        #expect(try CommandRunner.execute("/usr/bin/ssh-add", ["-d", key], environment: environment).status == 0)
        // SIGTERM stops it and leaves the socket to systemd.
        kill(pid, SIGTERM)
        var running = true
        for _ in 0..<100 where running {
            usleep(50_000)
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            running = state != nil && state != "Z"
        }
        #expect(!running)
        #expect(FileManager.default.fileExists(atPath: socket))
    }
}

extension AgentProgramTests {
    @Test func aKeyMadeInTheKeychainSignsListsAndOnlyDeleteRemovesIt() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-made")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let (switchable, allow, deny) = try Self.switchablePinentry(in: prompts)
        try deny.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
        try withAgent(["--keychain"], extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99"]) { agent in
            let made = try agent.run(Self.keyhaven, ["ssh", "new-key", "deploy", "--type", "ecdsa"])
            #expect(made.status == 0, "\(made.error)")
            let line = made.output.trimmingCharacters(in: .newlines)
            #expect(line.hasPrefix("ecdsa-sha2-nistp256 AAAA") && line.hasSuffix(" deploy"))
            let publicKey = agent.folder + "/deploy.pub"
            try (line + "\n").write(toFile: publicKey, atomically: true, encoding: .utf8)

            #expect(try agent.sshAdd("-L").output.contains(line))
            let message = agent.folder + "/message"
            try "a tag".write(toFile: message, atomically: true, encoding: .utf8)
            let signed = try agent.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "git", "-f", publicKey, message])
            #expect(signed.status == 0, "\(signed.error)")
            try ("someone " + line + "\n").write(toFile: agent.folder + "/allowed", atomically: true, encoding: .utf8)
            let verified = try agent.run("/usr/bin/ssh-keygen", ["-Y", "verify", "-f", agent.folder + "/allowed", "-I", "someone", "-n", "git",
                                                                "-s", message + ".sig"], input: "a tag")
            #expect(verified.status == 0, "\(verified.error)")

            let listed = try agent.run(Self.keyhaven, ["ssh", "list"])
            #expect(listed.status == 0)
            let row = try #require(listed.output.split(separator: "\n").first { $0.hasPrefix("deploy\t") })
            #expect(row.contains("\tecdsa-sha2-nistp256\tSHA256:") && row.contains("made in the keychain") && row.contains("this device only"))
            // Its last use: by ssh-keygen, in the namespace git, without a prompt.
            let lastUse = String(try #require(row.split(separator: "\t").last))
            #expect(lastUse.contains(" by ssh-keygen (") && lastUse.hasSuffix(" to namespace git (no prompt)"), "\(lastUse)")

            // ssh-add -D removes what clients added, never a key made in the keychain.
            #expect(try agent.sshAdd("-D").status == 0)
            #expect(try agent.sshAdd("-L").output.contains(line))
            // The private key is ssh's and ssh-keygen's: keyhaven itself is asked about, and denied.
            let read = try agent.run(Self.keyhaven, ["find-generic-password", "-s", "keyhaven.ssh-key", "-w"])
            #expect(read.status != 0 && !read.output.contains("nistp256"))
            #expect(try String(contentsOfFile: prompts + "/deny.log", encoding: .utf8).contains("keyhaven"))
            #expect(try agent.run(Self.keyhaven, ["ssh", "delete", "nothing"]).status == 44)
            // Deleting it asks too; the user allows.
            try allow.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
            let deleted = try agent.run(Self.keyhaven, ["ssh", "delete", "deploy"])
            #expect(deleted.status == 0, "\(deleted.error)")
            #expect(try agent.sshAdd("-l").status == 1)
            #expect(try agent.run(Self.keyhaven, ["ssh", "new-key", "x", "--type", "dsa"]).status == 64)
        }
    }
}
