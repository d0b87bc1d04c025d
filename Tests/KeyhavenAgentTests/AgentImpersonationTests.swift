import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// Another local user must not be able to pose as a user's agent (the security review's high
/// finding): with `XDG_RUNTIME_DIR` unset the socket is `/tmp/keyhaven-<uid>/agent.sock`, a place
/// any user can claim first. Played with two real uids, an attacker and a victim.
@Suite("Agent impersonation by another user", .freshKeychain(), .serialized,
       .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct AgentImpersonationTests {
    let attacker: LocalUser
    let victim: LocalUser
    let binaries: SharedExecutables

    init() throws {
        attacker = try LocalUser.make("keyhaven-attacker")
        victim = try LocalUser.make("keyhaven-victim")
        binaries = try SharedExecutables(["keyhaven", "keyhavend", "keyhaven-test-helper"])
    }

    /// The victim's environment: its own keychain home, and no runtime folder (ssh without logind).
    func victimEnvironment(home: String) -> [String: String] {
        ["KEYHAVEN_HOME": home, "PATH": "/usr/bin:/bin", "HOME": home]
    }

    /// The attacker's fake agent listening at `path`; stop it with ``stop(_:)``.
    func fakeAgent(at path: String) throws -> (Process, Pipe) {
        let listener = attacker.process(binaries.path("keyhaven-test-helper"), ["listen", path], environment: ["PATH": "/usr/bin:/bin"])
        let output = Pipe()
        listener.standardOutput = output
        try listener.run()
        // Ready once it says so: bound, opened to everyone and listening. The file appears before
        // its chmod, and a socket renamed in between keeps its first mode, which refuses the
        // victim for a reason that is not the one under test.
        _ = HelperProcess.read((listener, output), until: "listening\n")  // or it exited: the expectations say why
        return (listener, output)
    }

    /// Stops the fake agent; what it received, one "received N" line per connection.
    func stop(_ listener: (Process, Pipe)) -> String {
        // SIGKILL: a child of the test process inherits its blocked signals, SIGTERM among them.
        kill(listener.0.processIdentifier, SIGKILL)
        listener.0.waitUntilExit()
        return String(decoding: listener.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test("A fake agent in /tmp/keyhaven-<victim uid>, made by another user, gets no byte of a password or a secret")
    func fakeAgentInSharedTmp() throws {
        defer { binaries.remove() }
        let folder = "/tmp/keyhaven-\(victim.uid)"
        try? FileManager.default.removeItem(atPath: folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The review's attack: the attacker makes the folder (0755) and listens on a 0777 socket.
        #expect(try attacker.run("/bin/mkdir", ["-m", "0755", folder], environment: [:]).status == 0)
        let listener = try fakeAgent(at: folder + "/agent.sock")
        let home = try victim.makeFolder(prefix: "keyhaven-victim-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = victimEnvironment(home: home)

        let add = try victim.run(binaries.path("keyhaven"), ["add-generic-password", "-a", "victim", "-s", "api", "-w", "TOKEN-canary"],
                                 environment: environment)
        let unlock = try victim.run(binaries.path("keyhaven"), ["unlock-keychain", "-p", "PASSPHRASE-canary"], environment: environment)
        // The victim's own agent refuses to serve from the attacker's folder.
        let agent = try victim.run(binaries.path("keyhavend"), [], environment: environment)
        let received = stop(listener)

        #expect(add.status != 0 && add.error.contains("refusing the agent socket"), "\(add)")
        #expect(unlock.status != 0 && unlock.error.contains("refusing the agent socket"), "\(unlock)")
        #expect(agent.status != 0 && agent.error.contains("belongs to uid \(attacker.uid)"), "\(agent)")
        #expect(!received.contains("received"), "the fake agent was connected to: \(received)")
    }

    @Test("A socket in the victim's own folder served by another user's process is refused (SO_PEERCRED)")
    func peerOfAnotherUser() throws {
        defer { binaries.remove() }
        // The attacker's listener, moved (by root, standing in for any way a socket could end up
        // there) into the victim's private runtime folder.
        let attackerFolder = try attacker.makeFolder(prefix: "keyhaven-attacker-run")
        let runtime = try victim.makeFolder(prefix: "keyhaven-victim-run")
        let home = try victim.makeFolder(prefix: "keyhaven-victim-home")
        defer { for folder in [attackerFolder, runtime, home] { try? FileManager.default.removeItem(atPath: folder) } }
        let listener = try fakeAgent(at: attackerFolder + "/agent.sock")
        #expect(mkdir(runtime + "/keyhaven", 0o700) == 0 && chown(runtime + "/keyhaven", victim.uid, victim.gid) == 0)
        #expect(rename(attackerFolder + "/agent.sock", runtime + "/keyhaven/agent.sock") == 0)
        var environment = victimEnvironment(home: home)
        environment["XDG_RUNTIME_DIR"] = runtime

        let keyhaven = binaries.path("keyhaven")
        let add = try victim.run(keyhaven, ["add-generic-password", "-a", "victim", "-w", "TOKEN-canary"], environment: environment)
        let received = stop(listener)
        // The command refused the impostor, started the victim's own agent (which takes the
        // socket's place: the folder is the victim's) and stored the item there.
        let found = try victim.run(keyhaven, ["find-generic-password", "-a", "victim", "-w"], environment: environment)
        _ = try victim.run(keyhaven, ["agent", "stop"], environment: environment)
        #expect(add.status == 0, "\(add)")
        #expect(found.output == "TOKEN-canary\n", "\(found)")
        #expect(!received.contains("received") || received.split(separator: "\n").allSatisfy { $0 == "listening" || $0 == "received 0" },
                "the fake agent received bytes: \(received)")
        // And the client alone, as the library uses it, refuses the impostor before sending.
        let impostor = try fakeAgent(at: attackerFolder + "/agent2.sock")
        #expect(rename(attackerFolder + "/agent2.sock", runtime + "/keyhaven/impostor.sock") == 0)
        let probe = try victim.run(binaries.path("keyhaven-test-helper"), ["probe", runtime + "/keyhaven/impostor.sock"], environment: environment)
        let heard = stop(impostor)
        #expect(probe.output.contains("served by uid \(attacker.uid)"), "\(probe)")
        #expect(!heard.contains("received") || heard.split(separator: "\n").allSatisfy { $0 == "listening" || $0 == "received 0" }, "\(heard)")
    }

    @Test("A symbolic link in place of the socket folder is refused by the client and the agent")
    func symlinkedFolder() throws {
        defer { binaries.remove() }
        let folder = "/tmp/keyhaven-\(victim.uid)"
        try? FileManager.default.removeItem(atPath: folder)
        defer { unlink(folder) }
        // A link the attacker owns, to a folder the victim owns: following it would look private.
        let target = try victim.makeFolder(prefix: "keyhaven-victim-target")
        let home = try victim.makeFolder(prefix: "keyhaven-victim-home")
        defer { for path in [target, home] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(try attacker.run("/bin/ln", ["-s", target, folder], environment: [:]).status == 0)
        let environment = victimEnvironment(home: home)
        let agent = try victim.run(binaries.path("keyhavend"), [], environment: environment)
        #expect(agent.status != 0 && agent.error.contains("is a symbolic link"), "\(agent)")
        let add = try victim.run(binaries.path("keyhaven"), ["add-generic-password", "-a", "v", "-w", "x"], environment: environment)
        #expect(add.status != 0 && add.error.contains("is a symbolic link"), "\(add)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: target)) == [])
    }
}

/// The folder checks on their own, as any user.
@Suite(.freshKeychain())
struct AgentSocketFolderTests {
    @Test("The client refuses a socket folder open to other users, or a link, before connecting")
    func clientRefusesUnsafeFolders() throws {
        let base = try TemporaryFolder.make(prefix: "keyhaven-folder")
        defer { try? FileManager.default.removeItem(atPath: base) }
        let open = base + "/open"
        #expect(mkdir(open, 0o755) == 0)
        chmod(open, 0o755)
        #expect(throws: StoreError.self) { try AgentSocket(path: open + "/agent.sock").verifyFolder() }
        #expect(symlink(base, base + "/link") == 0)
        #expect(throws: StoreError.self) { try AgentSocket(path: base + "/link/agent.sock").verifyFolder() }
        #expect(throws: Never.self) { try AgentSocket(path: base + "/agent.sock").verifyFolder() }
        // The agent refuses them too, and makes a missing folder 0700.
        #expect(throws: StoreError.self) { try AgentSocket(path: open + "/agent.sock").preparePrivateFolder() }
        #expect(throws: StoreError.self) { try AgentSocket(path: base + "/link/agent.sock").preparePrivateFolder() }
        try AgentSocket(path: base + "/made/agent.sock").preparePrivateFolder()
        #expect((try FileManager.default.attributesOfItem(atPath: base + "/made")[.posixPermissions] as? Int) == 0o700)
    }
}
