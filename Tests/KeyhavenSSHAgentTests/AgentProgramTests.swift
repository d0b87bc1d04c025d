import Foundation
import KeychainTestSupport
import Testing

/// `keyhaven-ssh-agent` as shells and OpenSSH's tools drive it: `eval $(keyhaven-ssh-agent -s)`,
/// `ssh-add`, `ssh-keygen -Y sign`, signals, `-k` and the command form, over a keyhavend of the
/// test's own (started by the agent, as on first use).
@Suite(.serialized, .freshKeychain()) struct AgentProgramTests {
    /// One running agent, its variables, and a folder of keys made by ssh-keygen.
    struct Running {
        let environment: [String: String]
        let folder: String
        let pid: Int32
        let socket: String

        func run(_ program: String, _ arguments: [String], extra: [String: String] = [:], input: String? = nil) throws -> CommandRunner.Result {
            try CommandRunner.execute(program, arguments, environment: environment.merging(extra) { $1 }, input: input)
        }

        func sshAdd(_ arguments: String..., extra: [String: String] = [:]) throws -> CommandRunner.Result {
            try run("/usr/bin/ssh-add", arguments, extra: extra)
        }

        /// A key made by ssh-keygen, without a passphrase; its private key file's path.
        func makeKey(_ type: String, comment: String) throws -> String {
            let path = folder + "/id_\(type)_\(comment)"
            let made = try run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", comment, "-f", path])
            #expect(made.status == 0, "\(made.error)")
            return path
        }

        /// Signs `file` with `key`'s agent-held private half: ssh-keygen is given a copy of the
        /// .pub alone (beside the private key file, it would sign with that file when the agent
        /// refuses).
        func sign(_ file: String, key: String, namespace: String = "git") throws -> CommandRunner.Result {
            try? FileManager.default.removeItem(atPath: file + ".sig")
            let publicOnly = folder + "/public-only"
            try FileManager.default.createDirectory(atPath: publicOnly, withIntermediateDirectories: true)
            let copy = publicOnly + "/" + (key as NSString).lastPathComponent + ".pub"
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: key + ".pub", toPath: copy)
            return try run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", namespace, "-f", copy, file])
        }
    }

    static let agent = CommandRunner.products.appendingPathComponent("keyhaven-ssh-agent").path

    /// A pinentry that runs the one whose path is in `FOLDER/which`: `allow` (ScriptedPinentry:
    /// OK to all, the PIN from `FOLDER/pin`, its log in `FOLDER/pinentry.log`) or `deny`, which
    /// answers CONFIRM as pinentry does when the user presses Cancel (its log in `FOLDER/deny.log`).
    static func switchablePinentry(in prompts: String) throws -> (switchable: String, allow: String, deny: String) {
        let allow = try ScriptedPinentry.write(in: prompts)
        let deny = prompts + "/deny"
        try ExecutableFile.write("""
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              echo "$line" >> '\(prompts)/deny.log'
              case "$line" in CONFIRM*) echo "ERR 83886179 Operation cancelled <Pinentry>" ;; BYE*) echo OK; exit 0 ;; *) echo OK ;; esac
            done
            """, to: deny, mode: 0o700)
        let switchable = prompts + "/pinentry-switch"
        try ExecutableFile.write("#!/bin/sh\nexec \"$(cat '\(prompts)/which')\"\n", to: switchable, mode: 0o700)
        return (switchable, allow, deny)
    }

    /// Starts an agent with `-s` and reads its variables; stops it and the test's keyhavend after `body`.
    func withAgent(_ arguments: [String] = [], extra: [String: String] = [:], _ body: (Running) throws -> Void) throws {
        let runner = try CommandRunner()
        var environment = runner.environment
        environment["PATH"] = "/usr/bin:/bin"
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        environment.merge(extra) { $1 }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-ssh")
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            _ = try? CommandRunner.execute(CommandRunner.products.appendingPathComponent("keyhaven").path, ["agent", "stop"], environment: environment)
            try? FileManager.default.removeItem(atPath: runner.runtime)
        }
        let started = try CommandRunner.execute(Self.agent, ["-s"] + arguments, environment: environment)
        try #require(started.status == 0, "\(started.error)")
        let socket = try #require(started.output.firstMatch(of: /SSH_AUTH_SOCK=([^;]+); export SSH_AUTH_SOCK;/)?.1)
        let pid = try #require(started.output.firstMatch(of: /SSH_AGENT_PID=([0-9]+); export SSH_AGENT_PID;/).flatMap { Int32($0.1) })
        #expect(started.output.hasSuffix("echo Agent pid \(pid);\n"))
        environment["SSH_AUTH_SOCK"] = String(socket)
        environment["SSH_AGENT_PID"] = String(pid)
        defer { kill(pid, SIGKILL) }
        try body(Running(environment: environment, folder: folder, pid: pid, socket: String(socket)))
    }

    @Test func startsListsNothingAndStopsWithMinusK() throws {
        try withAgent { agent in
            let socketInfo = try FileManager.default.attributesOfItem(atPath: agent.socket)
            #expect((socketInfo[.posixPermissions] as? Int) == 0o600)
            let empty = try agent.sshAdd("-l")
            #expect(empty.status == 1 && empty.output.contains("The agent has no identities."))
            let killed = try agent.run(Self.agent, ["-k"])
            #expect(killed.status == 0)
            #expect(killed.output == "unset SSH_AUTH_SOCK;\nunset SSH_AGENT_PID;\necho Agent pid \(agent.pid) killed;\n")
            for _ in 0..<200 where FileManager.default.fileExists(atPath: agent.socket) { usleep(10_000) }
            #expect(!FileManager.default.fileExists(atPath: agent.socket))
            #expect(!FileManager.default.fileExists(atPath: (agent.socket as NSString).deletingLastPathComponent))
            #expect(try agent.sshAdd("-l").status == 2)
        }
    }

    @Test func keysAreAddedListedUsedAndRemovedAndEachAgentHasItsOwn() throws {
        try withAgent { agent in
            let ed = try agent.makeKey("ed25519", comment: "ed")
            let ecdsa = try agent.makeKey("ecdsa", comment: "ec")
            let rsa = try agent.makeKey("rsa", comment: "rsa")
            let added = try agent.sshAdd(ed, ecdsa, rsa)
            #expect(added.status == 0, "\(added.error)")
            let listed = try agent.sshAdd("-l")
            #expect(listed.status == 0)
            #expect(listed.output.split(separator: "\n").map { $0.split(separator: " ").dropFirst(2).first } == ["ed", "ec", "rsa"])

            // Each key signs as the agent's, and OpenSSH verifies it.
            let message = agent.folder + "/message"
            try "a commit".write(toFile: message, atomically: true, encoding: .utf8)
            for key in [ed, ecdsa, rsa] {
                let signed = try agent.sign(message, key: key)
                #expect(signed.status == 0, "\(signed.error)")
                let allowed = agent.folder + "/allowed"
                try ("someone " + String(contentsOfFile: key + ".pub", encoding: .utf8)).write(toFile: allowed, atomically: true, encoding: .utf8)
                let verified = try agent.run("/usr/bin/ssh-keygen", ["-Y", "verify", "-f", allowed, "-I", "someone", "-n", "git",
                                                                    "-s", message + ".sig"], input: "a commit")
                #expect(verified.status == 0, "\(verified.output) \(verified.error)")
            }

            // A second agent holds its own keys.
            try withAgent { (other: Running) throws in
                let listing = try other.sshAdd("-l")
                #expect(listing.status == 1)
            }

            #expect(try agent.sshAdd("-d", ecdsa + ".pub").status == 0)
            #expect(try agent.sshAdd("-l").output.split(separator: "\n").count == 2)
            #expect(try agent.sign(message, key: ecdsa).status != 0)

            // SIGUSR1 forgets every key, as OpenSSH's agent does.
            kill(agent.pid, SIGUSR1)
            var listing = try agent.sshAdd("-l")
            for _ in 0..<100 where listing.status != 1 {
                usleep(20_000)
                listing = try agent.sshAdd("-l")
            }
            #expect(listing.status == 1)
        }
    }

    @Test func aLifetimeForgetsTheKey() throws {
        try withAgent(["-t", "2"]) { agent in
            let ed = try agent.makeKey("ed25519", comment: "brief")
            #expect(try agent.sshAdd(ed).status == 0)
            #expect(try agent.sshAdd("-l").status == 0)
            sleep(3)
            #expect(try agent.sshAdd("-l").status == 1)
        }
    }

    @Test func aLockedAgentListsAndSignsNothingUntilUnlocked() throws {
        try withAgent { agent in
            let ed = try agent.makeKey("ed25519", comment: "locked")
            #expect(try agent.sshAdd(ed).status == 0)
            let askpass = agent.folder + "/askpass"
            try ExecutableFile.write("#!/bin/sh\ncat \(agent.folder)/passphrase\n", to: askpass, mode: 0o700)
            let ask = ["SSH_ASKPASS": askpass, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"]
            try "right horse\n".write(toFile: agent.folder + "/passphrase", atomically: true, encoding: .utf8)
            #expect(try agent.sshAdd("-x", extra: ask).status == 0)
            #expect(try agent.sshAdd("-l").status == 1)
            let message = agent.folder + "/message"
            try "data".write(toFile: message, atomically: true, encoding: .utf8)
            #expect(try agent.sign(message, key: ed).status != 0)
            try "wrong\n".write(toFile: agent.folder + "/passphrase", atomically: true, encoding: .utf8)
            #expect(try agent.sshAdd("-X", extra: ask).status != 0)
            try "right horse\n".write(toFile: agent.folder + "/passphrase", atomically: true, encoding: .utf8)
            #expect(try agent.sshAdd("-X", extra: ask).status == 0)
            #expect(try agent.sshAdd("-l").status == 0)
            #expect(try agent.sign(message, key: ed).status == 0)
        }
    }

    @Test func aConfirmKeyAsksNamingTheProgramAndWhatItSigns() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-prompt")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let (switchable, allow, deny) = try Self.switchablePinentry(in: prompts)
        try allow.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
        try withAgent(extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99"]) { agent in
            let ed = try agent.makeKey("ed25519", comment: "work laptop")
            #expect(try agent.sshAdd("-c", ed).status == 0)
            let message = agent.folder + "/message"
            try "data".write(toFile: message, atomically: true, encoding: .utf8)
            let signed = try agent.sign(message, key: ed)
            #expect(signed.status == 0, "\(signed.error)")
            let log = try String(contentsOfFile: prompts + "/pinentry.log", encoding: .utf8)
            let description = try #require(log.split(separator: "\n").first { $0.hasPrefix("SETDESC ") })
            #expect(description.contains("ssh-keygen ("))
            #expect(description.contains("\"work laptop\""))
            #expect(description.contains("sign a git commit"))

            try deny.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
            #expect(try agent.sign(message, key: ed).status != 0)
            #expect(try String(contentsOfFile: prompts + "/deny.log", encoding: .utf8).contains("CONFIRM"))
        }
    }

    @Test func theCommandFormRunsTheCommandWithTheAgentsVariables() throws {
        let runner = try CommandRunner()
        defer {
            _ = try? CommandRunner.execute(CommandRunner.products.appendingPathComponent("keyhaven").path, ["agent", "stop"], environment: runner.environment)
            try? FileManager.default.removeItem(atPath: runner.runtime)
        }
        var environment = runner.environment
        environment["PATH"] = "/usr/bin:/bin"
        let ran = try CommandRunner.execute(Self.agent, ["/bin/sh", "-c", "ssh-add -l; echo \"status $? pid $SSH_AGENT_PID\""], environment: environment)
        #expect(ran.status == 0)
        let pid = try #require(ran.output.firstMatch(of: /status 1 pid ([0-9]+)/).flatMap { Int32($0.1) })
        // The agent ends once the command has (it looks every ten seconds).
        var alive = true
        for _ in 0..<150 where alive {
            usleep(100_000)
            alive = kill(pid, 0) == 0
        }
        #expect(!alive)
    }

    @Test func aBadCommandLineIsAUsageError() throws {
        let runner = try CommandRunner()
        defer { try? FileManager.default.removeItem(atPath: runner.runtime) }
        var environment = runner.environment
        environment["SSH_AGENT_PID"] = nil
        for (arguments, says) in [(["-c", "-s"], "usage:"), (["-t", "soon"], "Invalid lifetime"), (["-E", "sha1"], "Invalid hash algorithm"),
                                  (["-k"], "SSH_AGENT_PID not set"), (["-x"], "invalid option -- x"),
                                  (["--approval-minutes", "soon"], "--approval-minutes takes a number"),
                                  (["--approval-minutes=1441"], "from 0 to 1440"), (["-s", "--approval-minutes"], "--approval-minutes takes")] {
            let result = try CommandRunner.execute(Self.agent, arguments, environment: environment)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains(says), "\(arguments): \(result.error)")
        }
    }
}
