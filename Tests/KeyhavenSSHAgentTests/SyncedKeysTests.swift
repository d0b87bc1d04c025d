import Foundation
import KeychainTestSupport
import Testing

/// An SSH key made with `--sync` on one device, used on another: the copy arrives through a real
/// sync server with an access object of the receiving device's (OpenSSH's programs), so there too
/// ssh-keygen signs unasked and any other program is asked about, never trusted for being synced.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL (scripts/bootstrap)"))
struct SyncedKeysTests {
    @Test("A --sync key reaches the other device, is listed as synchronizable, signs there for ssh-keygen and is refused to python3; --sync --tpm is refused")
    func aSyncedKeySignsOnTheOtherDeviceOnlyForOpenSSH() async throws {
        try await SyncDevices.withDevices(["laptop", "desktop"]) { server, _, devices in
            let (laptop, desktop) = (devices[0], devices[1])
            try SyncDevices.pair(laptop, [desktop], server: server)
            let made = try laptop.keyhaven("ssh", "new-key", "roaming", "--type", "ecdsa", "--sync")
            #expect(made.status == 0, "\(made.error)")
            #expect(try laptop.keyhaven("ssh", "new-key", "x", "--tpm", "--sync").status == 64)
            try SyncDevices.syncNow(laptop)
            try SyncDevices.syncNow(desktop)

            let listed = try desktop.keyhaven("ssh", "list")
            let row = try #require(listed.output.split(separator: "\n").first { $0.hasPrefix("roaming\t") }, "\(listed)")
            #expect(row.contains("made in the keychain, synchronizable"), "\(row)")
            // The copy came with an access object of the desktop's: its OpenSSH programs, by digest.
            let access = try desktop.keyhaven("access", "list", "-s", "keyhaven.ssh-key")
            #expect(access.output.contains("\"/usr/bin/ssh-keygen\" sha256:") && access.output.contains("\"/usr/bin/ssh\" sha256:")
                    && !access.output.contains("any application"), "\(access)")

            // The desktop's agent signs with the copy for ssh-keygen, and refuses another program.
            desktop.usesAgent = true
            let socket = desktop.runtime + "/ssh.sock"
            let started = try desktop.run(TestDevice.binaries.appendingPathComponent("keyhaven-ssh-agent").path, ["-s", "--keychain", "-a", socket])
            #expect(started.status == 0, "\(started.error)")
            let pid = try #require(started.output.firstMatch(of: /SSH_AGENT_PID=([0-9]+);/).flatMap { Int32($0.1) })
            defer { kill(pid, SIGKILL) }
            desktop.extraEnvironment["SSH_AUTH_SOCK"] = socket
            let publicKey = desktop.home + "/roaming.pub", message = desktop.home + "/message"
            try made.output.write(toFile: publicKey, atomically: true, encoding: .utf8)
            try "a commit".write(toFile: message, atomically: true, encoding: .utf8)
            let signed = try desktop.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "git", "-f", publicKey, message])
            #expect(signed.status == 0, "\(signed.error)")
            let client = desktop.home + "/client.py"
            try AgentProgramTests.signingClient.write(toFile: client, atomically: true, encoding: .utf8)
            let other = try desktop.run("/usr/bin/python3", [client, publicKey])
            #expect(other.output == "5\n", "a synced copy trusted another program: \(other)")
        }
    }
}
