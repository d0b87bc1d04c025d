import Foundation
import KeychainTestSupport
import Testing

extension KeychainAccessWindowTests {
    @Test("The SSH Keys page: a kept key with its last use, and the approval its prompt gave, revoked with its Revoke button")
    func sshKeysPage() throws {
        try #require(Self.toolsPresent, "scripts/bootstrap installs xvfb, at-spi2-core, python3-pyatspi and imagemagick")
        var runner = try CommandRunner()
        defer { runner.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-window-ssh")
        let shots = ProcessInfo.processInfo.environment["KEYHAVEN_SCREENSHOTS"] ?? folder
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        // The first confirmation is answered with the middle button (approve git signing); any
        // later one is denied.
        let pinentry = folder + "/pinentry"
        try ExecutableFile.write("""
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              case "$line" in
                CONFIRM*) if [ -e '\(folder)/answered' ]; then echo "ERR 83886179 Operation cancelled <Pinentry>"
                          else touch '\(folder)/answered'; echo "ERR 83886194 Not confirmed <Pinentry>"; fi ;;
                BYE*) echo OK; exit 0 ;;
                *) echo OK ;;
              esac
            done
            """, to: pinentry, mode: 0o700)
        runner.extraEnvironment = ["KEYHAVEN_PINENTRY": pinentry, "DISPLAY": ":99"]

        let started = try CommandRunner.execute(CommandRunner.products.appendingPathComponent("keyhaven-ssh-agent").path,
                                                ["-s", "--keychain", "-a", folder + "/ssh.sock"], environment: runner.environment)
        #expect(started.status == 0, "\(started.error)")
        let pid = try #require(started.output.firstMatch(of: /SSH_AGENT_PID=([0-9]+);/).flatMap { Int32($0.1) })
        defer { kill(pid, SIGKILL) }
        let made = try runner.run("ssh", "new-key", "deploy", "--type", "ecdsa", "--confirm")
        #expect(made.status == 0, "\(made.error)")
        try made.output.write(toFile: folder + "/deploy.pub", atomically: true, encoding: .utf8)
        try "a tag".write(toFile: folder + "/message", atomically: true, encoding: .utf8)
        let signed = try CommandRunner.execute("/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "git", "-f", folder + "/deploy.pub", folder + "/message"],
                                               environment: runner.environment.merging(["SSH_AUTH_SOCK": folder + "/ssh.sock"]) { $1 })
        #expect(signed.status == 0, "\(signed.error)")

        let out = try Self.drive(runner, folder: folder, variables: ["SHOTS": shots, "PAGE": "ssh"])
        let passed = out.contains("driver=0")
        if passed && shots == folder { try? FileManager.default.removeItem(atPath: folder) }
        #expect(passed, "\(out)\nscreenshots in \(shots)")
        for step in ["ssh keys page", "approval revoked"] { #expect(out.contains(step + "\n"), "\(step)") }
    }
}
