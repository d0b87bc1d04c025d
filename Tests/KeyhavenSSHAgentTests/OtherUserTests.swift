import Foundation
import KeychainTestSupport
import Testing

/// Another local user who reaches a user's SSH agent socket (a socket left open to all, or one
/// in a shared folder) gets nothing from it: keyhavend serves a handed-over connection only when
/// its peer is its own user (SO_PEERCRED), whatever the socket's mode. Played with two real uids.
@Suite("The SSH agent against another user", .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct OtherUserTests {
    @Test("Another user connected to the socket lists, signs and removes nothing")
    func anotherUserGetsNothing() throws {
        let (owner, other) = (try LocalUser.make("keyhaven-ssh-owner"), try LocalUser.make("keyhaven-ssh-other"))
        let binaries = try SharedExecutables(["keyhaven", "keyhavend", "keyhaven-pki", "keyhaven-ssh-agent"])
        defer { binaries.remove() }
        let home = try owner.makeFolder(prefix: "keyhaven-ssh-owner-home")
        let runtime = try owner.makeFolder(prefix: "keyhaven-ssh-owner-run")
        let shared = try owner.makeFolder(prefix: "keyhaven-ssh-shared")
        defer { for folder in [home, runtime, shared] { try? FileManager.default.removeItem(atPath: folder) } }
        chmod(shared, 0o755)
        let socket = shared + "/agent.sock"
        var environment = ["KEYHAVEN_HOME": home, "XDG_RUNTIME_DIR": runtime, "HOME": home, "PATH": "/usr/bin:/bin"]

        let started = try owner.run(binaries.path("keyhaven-ssh-agent"), ["-s", "--keychain", "-a", socket], environment: environment)
        #expect(started.status == 0, "\(started.error)")
        let pid = try #require(started.output.firstMatch(of: /SSH_AGENT_PID=([0-9]+);/).flatMap { Int32($0.1) })
        defer {
            kill(pid, SIGKILL)
            _ = try? owner.run(binaries.path("keyhaven"), ["agent", "stop"], environment: environment)
        }
        environment["SSH_AUTH_SOCK"] = socket
        #expect(try owner.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "owner-key", "-f", home + "/id"],
                              environment: environment).status == 0)
        #expect(try owner.run("/usr/bin/ssh-add", [home + "/id"], environment: environment).status == 0)
        try FileManager.default.copyItem(atPath: home + "/id.pub", toPath: shared + "/id.pub")
        chmod(shared + "/id.pub", 0o644)

        // Root opens the socket to everyone, standing for any way another user could reach it.
        #expect(chmod(socket, 0o666) == 0)
        let otherEnvironment = ["SSH_AUTH_SOCK": socket, "PATH": "/usr/bin:/bin", "HOME": "/"]
        let listed = try other.run("/usr/bin/ssh-add", ["-l"], environment: otherEnvironment)
        #expect(listed.status != 0 && !listed.output.contains("owner-key"), "\(listed)")
        let client = shared + "/client.py"
        try AgentProgramTests.signingClient.write(toFile: client, atomically: true, encoding: .utf8)
        chmod(client, 0o644)
        let signed = try other.run("/usr/bin/python3", [client, shared + "/id.pub"], environment: otherEnvironment)
        #expect(!signed.output.contains("14"), "\(signed)")
        _ = try other.run("/usr/bin/ssh-add", ["-D"], environment: otherEnvironment)

        // The owner still has the key, and uses it.
        let owned = try owner.run("/usr/bin/ssh-add", ["-l"], environment: environment)
        #expect(owned.status == 0 && owned.output.contains("owner-key"), "\(owned)")
        #expect(try owner.run("/bin/sh", ["-c", "echo data > '\(shared)/message'"], environment: environment).status == 0)
        let ownerSigned = try owner.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "file", "-f", shared + "/id.pub", shared + "/message"],
                                        environment: environment)
        #expect(ownerSigned.status == 0, "\(ownerSigned.error)")
    }
}
