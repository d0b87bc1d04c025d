import Foundation
import KeychainTestSupport
import Testing

/// pam_keyhaven (contrib/pam) through real PAM: Debian's pamtester runs a PAM service the test
/// writes to /etc/pam.d, for a user the test creates with a login password, so it needs root.
@Suite("pam_keyhaven", .freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct PAMModuleTests {
    static let service = "keyhaven-pam-test"

    /// Builds the module with the system compiler, writes the PAM service, gives the user a login password.
    func setUp(_ user: LocalUser, binaries: SharedExecutables) throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("contrib/pam/pam_keyhaven.c").path
        let module = binaries.path("pam_keyhaven.so")
        #expect(try Shell.run("/usr/bin/cc", ["-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", module, source, "-lpam"]) == 0,
                "pam_keyhaven.c does not build (scripts/bootstrap installs libpam0g-dev)")
        let line = "\(module) keyhaven=\(binaries.path("keyhaven"))"
        try """
            auth     required pam_unix.so
            auth     optional \(line)
            session  optional \(line)
            password optional \(line)

            """.write(toFile: "/etc/pam.d/\(Self.service)", atomically: true, encoding: .utf8)
        #expect(try Shell.run("/usr/sbin/chpasswd", [], input: "\(user.name):login-pw-1\n") == 0)
    }

    /// pamtester as root for `user`, answering its prompts with `input`.
    func pamtester(_ user: LocalUser, _ operations: [String], input: String, environment: [String: String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pamtester")
        process.arguments = [Self.service, user.name] + operations
        process.environment = environment
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test("Login gives the login keychain the login password and unlocks it; a password change re-wraps it")
    func loginAndPasswordChange() throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/pamtester"), "scripts/bootstrap installs pamtester")
        let user = try LocalUser.make("keyhaven-pam")
        let binaries = try SharedExecutables(["keyhaven", "keyhavend"])
        let home = try user.makeFolder(prefix: "keyhaven-pam-home")
        let runtime = try user.makeFolder(prefix: "keyhaven-pam-run")
        defer {
            try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(Self.service)")
            binaries.remove()
            try? FileManager.default.removeItem(atPath: home)
            try? FileManager.default.removeItem(atPath: runtime)
        }
        try setUp(user, binaries: binaries)
        let environment = ["KEYHAVEN_HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin"]
        func keyhaven(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
            try user.run(binaries.path("keyhaven"), arguments, environment: environment)
        }
        defer { _ = try? keyhaven("agent", "stop") }
        // The login keychain exists already, without a password (made on first use), with an item.
        #expect(try keyhaven("add-generic-password", "-a", "before-login", "-w", "kept").status == 0)

        // A wrong login password: PAM refuses, the keychain is untouched.
        #expect(try pamtester(user, ["authenticate", "open_session"], input: "wrong\n", environment: environment) != 0)
        #expect(try keyhaven("show-keychain-info", "login").output.contains("unlocked"))
        #expect(try keyhaven("lock-keychain").status == 0)

        #expect(try pamtester(user, ["authenticate", "open_session"], input: "login-pw-1\n", environment: environment) == 0)
        #expect(try keyhaven("show-keychain-info", "login").output.hasSuffix(" unlocked\n"))
        #expect(try keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")
        // Its password is the login password now: locked, only that password opens it.
        #expect(try keyhaven("lock-keychain").status == 0)
        #expect(try keyhaven("find-generic-password", "-a", "before-login", "-w").status == 36)
        #expect(try keyhaven("unlock-keychain", "-p", "wrong", "login").status == 51)
        #expect(try keyhaven("lock-keychain").status == 0)

        // The next login unlocks it (after an agent restart too).
        #expect(try keyhaven("agent", "stop").status == 0)
        #expect(try pamtester(user, ["authenticate", "open_session"], input: "login-pw-1\n", environment: environment) == 0)
        #expect(try keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")

        // A change of the login password: current, new, new again.
        #expect(try pamtester(user, ["chauthtok"], input: "login-pw-1\nlogin-pw-2\nlogin-pw-2\n", environment: environment) == 0)
        #expect(try keyhaven("lock-keychain").status == 0)
        #expect(try keyhaven("unlock-keychain", "-p", "login-pw-1", "login").status == 51)
        #expect(try keyhaven("unlock-keychain", "-p", "login-pw-2", "login").status == 0)
        #expect(try keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")
    }

    @Test("A first login creates the login keychain with the login password")
    func firstLogin() throws {
        let user = try LocalUser.make("keyhaven-pam")
        let binaries = try SharedExecutables(["keyhaven", "keyhavend"])
        let home = try user.makeFolder(prefix: "keyhaven-pam-home")
        let runtime = try user.makeFolder(prefix: "keyhaven-pam-run")
        defer {
            try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(Self.service)")
            binaries.remove()
            try? FileManager.default.removeItem(atPath: home)
            try? FileManager.default.removeItem(atPath: runtime)
        }
        try setUp(user, binaries: binaries)
        let environment = ["KEYHAVEN_HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin"]
        defer { _ = try? user.run(binaries.path("keyhaven"), ["agent", "stop"], environment: environment) }
        #expect(!FileManager.default.fileExists(atPath: home + "/login.keychain-db"))
        #expect(try pamtester(user, ["authenticate", "open_session"], input: "login-pw-1\n", environment: environment) == 0)
        #expect(FileManager.default.fileExists(atPath: home + "/login.keychain-db"))
        #expect(try user.run(binaries.path("keyhaven"), ["lock-keychain"], environment: environment).status == 0)
        #expect(try user.run(binaries.path("keyhaven"), ["unlock-keychain", "-p", "login-pw-1"], environment: environment).status == 0)
    }
}
