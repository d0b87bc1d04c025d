import Foundation
import KeychainTestSupport
import Testing

/// `git-credential-keyhaven` driven by real git (`git credential fill|approve|reject`), as
/// git-credential-osxkeychain is on a Mac.
@Suite(.freshKeychain(), .serialized)
struct GitCredentialTests {
    final class Git: Sendable {
        let runner: CommandRunner
        let helper: String

        init(runner: CommandRunner? = nil, helper: String = CommandRunner.products.appendingPathComponent("git-credential-keyhaven").path) throws {
            self.runner = try runner ?? CommandRunner()
            self.helper = helper
        }

        /// `git credential OPERATION` with `input`; what it printed, and its status.
        func credential(_ operation: String, _ input: String) throws -> (status: Int32, output: String) {
            var environment = runner.environment
            environment["GIT_TERMINAL_PROMPT"] = "0"
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            environment["HOME"] = TestHome.current!.path  // no user's ~/.gitconfig
            let result = try CommandRunner.execute("/usr/bin/git", ["-c", "credential.helper=" + helper, "-c", "credential.useHttpPath=true",
                                                                     "credential", operation], environment: environment, input: input)
            return (result.status, result.output)
        }
    }

    @Test("approve stores, fill finds it (username too), reject erases; the item is an internet password keyhaven finds")
    func roundTrip() throws {
        let git = try Git()
        defer { git.runner.finish() }
        #expect(try git.credential("approve", "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=example.com\n\n").output
                == "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n")
        let found = try git.runner.run("find-internet-password", "-s", "example.com", "-a", "ann")
        #expect(found.status == 0 && found.output.contains("\"ptcl\"<uint32>=\"htps\"") || found.output.contains("htps"))
        // A new password replaces the old one.
        #expect(try git.credential("approve", "protocol=https\nhost=example.com\nusername=ann\npassword=n3w\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=example.com\nusername=ann\n\n").output.contains("password=n3w\n"))
        // Rejecting the old password leaves the newer one; rejecting the current one erases it.
        #expect(try git.credential("reject", "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=example.com\n\n").output.contains("password=n3w\n"))
        #expect(try git.credential("reject", "protocol=https\nhost=example.com\nusername=ann\npassword=n3w\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=example.com\n\n").status != 0)  // no prompt allowed: git fails
    }

    @Test("reject on a keychain that stays locked fails with a message and erases nothing")
    func rejectWhenLocked() throws {
        var runner = try CommandRunner()
        let folder = TestHome.current!.path
        runner.extraEnvironment["KEYHAVEN_PINENTRY"] = try ScriptedPinentry.write(in: folder)
        try Data("not the password".utf8).write(to: URL(fileURLWithPath: folder + "/pin"))
        let git = try Git(runner: runner)
        defer { git.runner.finish() }
        #expect(try runner.run("create-keychain", "-p", "right", "git").status == 0)
        #expect(try runner.run("default-keychain", "-s", "git").status == 0)
        #expect(try git.credential("approve", "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n\n").status == 0)
        #expect(try runner.run("lock-keychain", "git").status == 0)
        let rejected = try CommandRunner.execute(git.helper, ["erase"], environment: runner.environment,
                                                 input: "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n\n")
        #expect(rejected.exited && rejected.status != 0, "\(rejected)")
        #expect(rejected.error.hasPrefix("git-credential-keyhaven: ") && !rejected.error.contains("s3cret"), "\(rejected.error)")
        #expect(try runner.run("unlock-keychain", "-p", "right", "git").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=example.com\n\n").output.contains("password=s3cret\n"))
    }

    @Test("Protocol, host, port and path tell credentials apart; a protocol it does not keep is not stored")
    func keys() throws {
        let git = try Git()
        defer { git.runner.finish() }
        #expect(try git.credential("approve", "protocol=https\nhost=git.example.com:8443\nusername=a\npassword=port\n\n").status == 0)
        #expect(try git.credential("approve", "protocol=http\nhost=git.example.com\nusername=a\npassword=plain\n\n").status == 0)
        #expect(try git.credential("approve", "protocol=https\nhost=git.example.com\npath=team/repo.git\nusername=a\npassword=path\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=git.example.com:8443\n\n").output.contains("password=port\n"))
        #expect(try git.credential("fill", "protocol=http\nhost=git.example.com\n\n").output.contains("password=plain\n"))
        #expect(try git.credential("fill", "protocol=https\nhost=git.example.com\npath=team/repo.git\n\n").output.contains("password=path\n"))
        #expect(try git.credential("fill", "protocol=https\nhost=other.example.com\n\n").status != 0)
        #expect(try git.credential("approve", "protocol=gopher\nhost=x\nusername=a\npassword=b\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=gopher\nhost=x\n\n").status != 0)
    }

    @Test("A credential for host:8443 is not one for host: no port is the protocol's default port, named or not")
    func portIsNeverAWildcard() throws {
        let git = try Git()
        defer { git.runner.finish() }
        #expect(try git.credential("approve", "protocol=https\nhost=intranet.example:8443\nusername=a\npassword=eight\n\n").status == 0)
        // Before, a request without a port had no port criterion and got the 8443 credential.
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example\n\n").status != 0)
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example:443\n\n").status != 0)
        // The default port, said or not, is one credential.
        #expect(try git.credential("approve", "protocol=https\nhost=intranet.example\nusername=a\npassword=default\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example:443\n\n").output.contains("password=default\n"))
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example\n\n").output.contains("password=default\n"))
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example:8443\n\n").output.contains("password=eight\n"))
        // Rejecting the default-port credential leaves the other.
        #expect(try git.credential("reject", "protocol=https\nhost=intranet.example\nusername=a\npassword=default\n\n").status == 0)
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example\n\n").status != 0)
        #expect(try git.credential("fill", "protocol=https\nhost=intranet.example:8443\n\n").output.contains("password=eight\n"))
        // A port that is not one is an error message.
        let helper = CommandRunner.products.appendingPathComponent("git-credential-keyhaven").path
        let bad = try CommandRunner.execute(helper, ["get"], environment: git.runner.environment,
                                            input: "protocol=https\nhost=intranet.example:99999\n\n")
        #expect(bad.status != 0 && bad.error.contains("port"))
    }

    @Test("The credentials trust the helper: a modified copy of it is refused without a prompt")
    func trust() throws {
        let git = try Git()
        defer { git.runner.finish() }
        #expect(try git.credential("approve", "protocol=https\nhost=example.com\nusername=ann\npassword=s3cret\n\n").status == 0)
        let folder = try TemporaryFolder.make(prefix: "keyhaven-git")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let copy = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path + "/git-credential-keyhaven"
        try ExecutableFile.copy(git.helper, to: copy, changed: true)
        // Another path: another application group, so the copy does not even find it.
        let other = try Git(helper: copy)
        #expect(try other.credential("fill", "protocol=https\nhost=example.com\n\n").status != 0)
    }

    @Test("Bad input is an error message, never a crash")
    func badInput() throws {
        let helper = CommandRunner.products.appendingPathComponent("git-credential-keyhaven").path
        let runner = try CommandRunner()
        defer { runner.finish() }
        for (arguments, input) in [([] as [String], ""), (["get"], "no equals sign\n"), (["get"], "protocol=https\n\n"),
                                   (["store"], String(repeating: "x=y\n", count: 300_000))] {
            let result = try CommandRunner.execute(helper, arguments, environment: runner.environment, input: input)
            #expect(result.exited && result.status != 0, "\(arguments)")
            #expect(result.error.hasPrefix("git-credential-keyhaven: ") || result.error.hasPrefix("Error: "), "\(result.error)")
        }
    }
}
