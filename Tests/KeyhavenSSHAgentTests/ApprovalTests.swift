import Foundation
import KeychainTestSupport
import Testing

/// A confirming key's prompt and the approvals it grants (`keyhaven ssh approvals`): the middle
/// button approves a namespace for the agent's `--approval-minutes`, or a process while it runs;
/// what an approval does not cover still asks; a revoked approval asks again.
extension AgentProgramTests {
    /// A pinentry that chooses the prompt's middle button once, then hands over to the denying
    /// one (`which`), logging what it was told to `standing.log`.
    static func standingPinentry(in prompts: String, then deny: String) throws -> String {
        let path = prompts + "/standing"
        try ExecutableFile.write("""
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              echo "$line" >> '\(prompts)/standing.log'
              case "$line" in
                CONFIRM*) echo '\(deny)' > '\(prompts)/which.new'; mv '\(prompts)/which.new' '\(prompts)/which'
                          echo "ERR 83886194 Not confirmed <Pinentry>" ;;
                BYE*) echo OK; exit 0 ;;
                *) echo OK ;;
              esac
            done
            """, to: path, mode: 0o700)
        return path
    }

    @Test func anApprovalSparesThePromptForItsNamespaceUntilRevoked() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-approval")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let (switchable, _, deny) = try Self.switchablePinentry(in: prompts)
        let standing = try Self.standingPinentry(in: prompts, then: deny)
        try standing.write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
        try withAgent(["--approval-minutes", "5"], extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99"]) { agent in
            let key = try agent.makeKey("ed25519", comment: "work laptop")
            #expect(try agent.sshAdd("-c", key).status == 0)
            let message = agent.folder + "/message"
            try "data".write(toFile: message, atomically: true, encoding: .utf8)

            // The user approves git signing for 5 minutes.
            let first = try agent.sign(message, key: key)
            #expect(first.status == 0, "\(first.error)")
            let told = try String(contentsOfFile: prompts + "/standing.log", encoding: .utf8)
            #expect(told.contains("SETOK Allow once") && told.contains("SETNOTOK Allow git signing for 5 min") && told.contains("SETCANCEL Deny"))

            // The next git signature needs no prompt (the denying pinentry would refuse it).
            #expect(try agent.sign(message, key: key).status == 0)
            #expect(!FileManager.default.fileExists(atPath: prompts + "/deny.log"))
            // Another namespace is not approved: asked, and denied.
            #expect(try agent.sign(message, key: key, namespace: "file").status != 0)
            #expect(try String(contentsOfFile: prompts + "/deny.log", encoding: .utf8).contains("CONFIRM"))

            // Listed, with what it allows and until when; revoked, git signing asks again.
            let listed = try agent.run(Self.keyhaven, ["ssh", "approvals"])
            #expect(listed.status == 0, "\(listed.error)")
            let line = try #require(listed.output.split(separator: "\n").first, "\(listed)")
            let fields = line.split(separator: "\t").map(String.init)
            #expect(fields.count == 4 && fields[1].hasPrefix("work laptop (SHA256:") && fields[2] == "git signing" && fields[3].hasPrefix("until 20"),
                    "\(fields)")
            let missing = try agent.run(Self.keyhaven, ["ssh", "approvals", "--revoke", "999999"])
            #expect(missing.status == 44 && missing.error.contains("could not be found"), "\(missing)")
            #expect(try agent.run(Self.keyhaven, ["ssh", "approvals", "--revoke", fields[0]]).status == 0)
            #expect(try agent.run(Self.keyhaven, ["ssh", "approvals"]).output.isEmpty)
            #expect(try agent.sign(message, key: key).status != 0)

            // A program that is not a keyhaven program may neither read nor revoke approvals.
            let script = agent.folder + "/uses.py"
            try Self.usesClient.write(toFile: script, atomically: true, encoding: .utf8)
            let read = try agent.run("/usr/bin/python3", [script])
            #expect(read.output.contains("refused"), "\(read)")
        }
    }

    @Test func aProcessApprovalLastsWhileItRunsAndOnlyForIt() throws {
        let prompts = try TemporaryFolder.make(prefix: "keyhaven-ssh-process")
        defer { try? FileManager.default.removeItem(atPath: prompts) }
        let (switchable, _, deny) = try Self.switchablePinentry(in: prompts)
        try Self.standingPinentry(in: prompts, then: deny).write(toFile: prompts + "/which", atomically: true, encoding: .utf8)
        try withAgent(extra: ["KEYHAVEN_PINENTRY": switchable, "DISPLAY": ":99"]) { agent in
            let key = try agent.makeKey("ecdsa", comment: "scripted")
            #expect(try agent.sshAdd("-c", key).status == 0)
            // One process asks three times over two connections, with no namespace and no binding:
            // approved for itself at the first prompt, it asks no more.
            let client = agent.folder + "/client.py"
            try Self.repeatedSigningClient.write(toFile: client, atomically: true, encoding: .utf8)
            let repeated = try agent.run("/usr/bin/python3", [client, key + ".pub", "3"])
            #expect(repeated.output == "14 14 14\n", "\(repeated)")
            #expect(try String(contentsOfFile: prompts + "/standing.log", encoding: .utf8).contains("SETNOTOK Allow this process"))
            // Another process (the same program) is asked again, and denied.
            let another = try agent.run("/usr/bin/python3", [client, key + ".pub", "1"])
            #expect(another.output == "5\n", "\(another)")
            // Once the process has exited its approval is gone.
            #expect(try agent.run(Self.keyhaven, ["ssh", "approvals"]).output.isEmpty)
        }
    }

    /// Asks for `count` signatures with the key of a .pub file, over a new connection after the
    /// first: the reply numbers, on one line.
    static let repeatedSigningClient = """
        import base64, os, socket, struct, sys
        blob = base64.b64decode(open(sys.argv[1]).read().split()[1])
        def string(b): return struct.pack(">I", len(b)) + b
        body = bytes([13]) + string(blob) + string(b"data") + struct.pack(">I", 0)
        replies = []
        s = None
        for n in range(int(sys.argv[2])):
            if n < 2:
                s = socket.socket(socket.AF_UNIX); s.connect(os.environ["SSH_AUTH_SOCK"])
            s.sendall(struct.pack(">I", len(body)) + body)
            header = s.recv(4, socket.MSG_WAITALL); reply = s.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)
            replies.append(str(reply[0]))
        print(" ".join(replies))
        """

    /// A program of the user that asks keyhavend for the SSH agent's record directly (the agent
    /// protocol's sshUses request): "refused" and the agent's words, or "answered".
    static let usesClient = """
        import os, socket, struct
        path = os.path.join(os.environ["XDG_RUNTIME_DIR"], "keyhaven", "agent.sock")
        s = socket.socket(socket.AF_UNIX); s.connect(path)
        body = bytes([11, 0, 27, 0])  # version 11, no home, sshUses, no revocation
        s.sendall(struct.pack(">I", len(body)) + body)
        header = s.recv(4, socket.MSG_WAITALL); reply = s.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)
        # version 11, no home, a failure (tag 0) whose code is authFailed (17)
        print("refused" if reply[:4] == bytes([11, 0, 0, 17]) else "answered", reply[:80])
        """
}
