import Foundation
import KeychainTestSupport
import Testing

/// The user's other programs against a key the SSH agent keeps in the keychain, played as an
/// ordinary user (root, which may read any process, only creates the user): a signature goes to
/// the OpenSSH programs the key trusts, unmodified and unpreloaded, and to nothing else without
/// the user's yes; the agent's processes are closed to the user's debuggers.
@Suite("The SSH agent against the user's other programs", .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct SameUserTests {
    @Test("As an ordinary user: python3, a modified copy of ssh-keygen and ssh-keygen with a preloaded library are asked and refused; ssh-keygen signs; neither agent's memory opens nor takes a debugger; the uses' record is keyhaven's alone")
    func otherProgramsOfTheUserAreRefused() throws {
        let user = try LocalUser.make("keyhaven-ssh-sameuser")
        let session = try UserKeychainSession(user, executables: ["keyhaven", "keyhavend", "keyhaven-pki", "keyhaven-ssh-agent"])
        let prompts = try user.makeFolder(prefix: "keyhaven-ssh-sameuser-prompts")
        defer {
            session.remove()
            try? FileManager.default.removeItem(atPath: prompts)
        }
        // Every prompt is declined and logged.
        let deny = prompts + "/deny"
        try ExecutableFile.write("""
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              echo "$line" >> '\(prompts)/prompts.log'
              case "$line" in CONFIRM*|GETPIN*) echo "ERR 83886179 Operation cancelled <Pinentry>" ;; BYE*) echo OK; exit 0 ;; *) echo OK ;; esac
            done
            """, to: deny, mode: 0o755)
        let client = prompts + "/client.py"
        try AgentProgramTests.signingClient.write(toFile: client, atomically: true, encoding: .utf8)
        chmod(client, 0o644)
        var environment = session.environment.merging(["KEYHAVEN_PINENTRY": deny, "DISPLAY": ":99"]) { $1 }
        let socket = session.runtime + "/ssh.sock"

        let started = try user.run(session.binaries.path("keyhaven-ssh-agent"), ["-s", "--keychain", "-a", socket], environment: environment)
        #expect(started.status == 0, "\(started.error)")
        let pid = try #require(started.output.firstMatch(of: /SSH_AGENT_PID=([0-9]+);/).flatMap { Int32($0.1) })
        defer { kill(pid, SIGKILL) }
        environment["SSH_AUTH_SOCK"] = socket
        let key = session.home + "/id"
        #expect(try user.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "kept", "-f", key], environment: environment).status == 0)
        let added = try user.run("/usr/bin/ssh-add", [key], environment: environment)
        #expect(added.status == 0, "\(added.error)")
        try FileManager.default.removeItem(atPath: key)  // the keychain's copy only
        let message = session.home + "/message"
        #expect(try user.run("/bin/sh", ["-c", "echo data > '\(message)'"], environment: environment).status == 0)
        func sign(_ program: String, extra: [String: String] = [:]) throws -> Int32 {
            try user.run(program, ["-Y", "sign", "-n", "file", "-f", key + ".pub", message],
                         environment: environment.merging(extra) { $1 }).status
        }
        func prompted() -> String { (try? String(contentsOfFile: prompts + "/prompts.log", encoding: .utf8)) ?? "" }

        // The OpenSSH program the key trusts signs without a prompt.
        #expect(try sign("/usr/bin/ssh-keygen") == 0)
        #expect(prompted().isEmpty, "\(prompted())")
        try? FileManager.default.removeItem(atPath: message + ".sig")

        // Another program of the user is asked about, and declined.
        let other = try user.run("/usr/bin/python3", [client, key + ".pub"], environment: environment)
        #expect(other.output == "5\n", "\(other)")
        #expect(prompted().contains("python3"), "\(prompted())")

        // A modified copy of ssh-keygen is another program. (A byte-identical copy is the same
        // program, as a copied app with the same signature is on macOS: it does what ssh-keygen
        // does for whoever runs it, which the user's programs can ask of ssh-keygen anyway.)
        let copy = session.home + "/ssh-keygen"
        #expect(try user.run("/bin/sh", ["-c", "cp /usr/bin/ssh-keygen '\(copy)' && printf '\\0' >> '\(copy)'"], environment: environment).status == 0)
        #expect(try sign(copy) != 0)
        #expect(prompted().contains("(\(copy.replacingOccurrences(of: "//", with: "/")))"), "\(prompted())")
        try? FileManager.default.removeItem(atPath: message + ".sig")

        // Nor is ssh-keygen itself, run with a library of the user's preloaded.
        let library = try #require(["/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0"]
            .first { FileManager.default.fileExists(atPath: $0) })
        #expect(try user.run("/bin/cp", [library, session.home + "/libmine.so"], environment: environment).status == 0)
        #expect(try sign("/usr/bin/ssh-keygen", extra: ["LD_PRELOAD": session.home + "/libmine.so"]) != 0)
        #expect(!FileManager.default.fileExists(atPath: message + ".sig"))

        // Neither process that holds the key opens to the user, though the user's own
        // process does (the control: what the kernel allows without the agents' hardening).
        let keyhavend = try #require(try user.run("/usr/bin/pgrep", ["-u", String(user.uid), "-x", "keyhavend"], environment: environment)
            .output.split(separator: "\n").first.flatMap { Int32($0) })
        // As OpenSSH's agent-ptrace test asks (a debugger's PTRACE_ATTACH), and /proc/PID/mem.
        let probe = """
            import ctypes, os, subprocess, sys
            libc = ctypes.CDLL(None, use_errno=True)
            control = subprocess.Popen(["/bin/sleep", "30"])
            def opens(pid):
                try: open("/proc/%d/mem" % pid, "rb").close(); return "opens"
                except OSError: return "closed"
            def attaches(pid):
                if libc.ptrace(16, pid, 0, 0) != 0: return "refused"
                os.waitpid(pid, 0x40000000)
                libc.ptrace(17, pid, 0, 0)
                return "attaches"
            print(*[f(p) for p in (control.pid, int(sys.argv[1]), int(sys.argv[2])) for f in (opens, attaches)])
            control.kill()
            """
        let probed = try user.run("/usr/bin/python3", ["-c", probe, String(pid), String(keyhavend)], environment: environment)
        #expect(probed.output == "opens attaches closed refused closed refused\n", "\(probed)")

        // Where the user's keys went is the keyhaven programs' to read: keyhaven reads the record,
        // the user's python3 asking keyhavend for it directly is refused.
        let record = try user.run(session.binaries.path("keyhaven"), ["ssh", "list"], environment: environment)
        #expect(record.status == 0 && record.output.contains(" by ssh-keygen ("), "\(record)")
        let uses = prompts + "/uses.py"
        try AgentProgramTests.usesClient.write(toFile: uses, atomically: true, encoding: .utf8)
        chmod(uses, 0o644)
        let asked = try user.run("/usr/bin/python3", [uses], environment: environment)
        #expect(asked.output.hasPrefix("refused"), "\(asked)")

        // The key is untouched by all of it.
        #expect(try sign("/usr/bin/ssh-keygen") == 0)
    }
}
