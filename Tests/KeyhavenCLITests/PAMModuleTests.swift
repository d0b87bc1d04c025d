import Foundation
import KeychainTestSupport
import Testing

/// pam_keyhaven (contrib/pam) through real PAM: Debian's pamtester runs a PAM service the test
/// writes to /etc/pam.d, for a user the test creates with a login password, so it needs root.
@Suite("pam_keyhaven", .freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct PAMModuleTests {
    static let service = "keyhaven-pam-test"

    /// Builds the module with the system compiler, writes the PAM service for the session's
    /// executables, gives the user a login password. Undone by ``tearDown(_:)``.
    func setUp() throws -> UserKeychainSession {
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-pam"))
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("contrib/pam/pam_keyhaven.c").path
        let module = session.binaries.path("pam_keyhaven.so")
        #expect(try Shell.run("/usr/bin/cc", ["-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", module, source, "-lpam"]) == 0,
                "pam_keyhaven.c does not build (scripts/bootstrap installs libpam0g-dev)")
        let line = "\(module) keyhaven=\(session.binaries.path("keyhaven"))"
        try """
            auth     required pam_unix.so
            auth     optional \(line)
            session  optional \(line)
            password optional \(line)

            """.write(toFile: "/etc/pam.d/\(Self.service)", atomically: true, encoding: .utf8)
        #expect(try Shell.run("/usr/sbin/chpasswd", [], input: "\(session.user.name):login-pw-1\n") == 0)
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/pamtester"), "scripts/bootstrap installs pamtester")
        return session
    }

    func tearDown(_ session: UserKeychainSession) {
        try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(Self.service)")
        session.remove()
    }

    /// pamtester as root for the session's user, answering its prompts with `input`; its status.
    func pamtester(_ session: UserKeychainSession, _ operations: [String], input: String) throws -> Int32 {
        try Shell.run("/usr/bin/pamtester", [Self.service, session.user.name] + operations, input: input, environment: session.environment)
    }

    @Test("Login gives the login keychain the login password and unlocks it; a password change re-wraps it")
    func loginAndPasswordChange() throws {
        let session = try setUp()
        defer { tearDown(session) }
        // The login keychain exists already, without a password (made on first use), with an item.
        #expect(try session.keyhaven("add-generic-password", "-a", "before-login", "-w", "kept").status == 0)

        // A wrong login password: PAM refuses, the keychain is untouched.
        #expect(try pamtester(session, ["authenticate", "open_session"], input: "wrong\n") != 0)
        #expect(try session.keyhaven("show-keychain-info", "login").output.contains("unlocked"))
        #expect(try session.keyhaven("lock-keychain").status == 0)

        #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n") == 0)
        #expect(try session.keyhaven("show-keychain-info", "login").output.hasSuffix(" unlocked\n"))
        #expect(try session.keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")
        // Its password is the login password now: locked, only that password opens it.
        #expect(try session.keyhaven("lock-keychain").status == 0)
        #expect(try session.keyhaven("find-generic-password", "-a", "before-login", "-w").status == 36)
        #expect(try session.keyhaven("unlock-keychain", "-p", "wrong", "login").status == 51)
        #expect(try session.keyhaven("lock-keychain").status == 0)

        // The next login unlocks it (after an agent restart too).
        #expect(try session.keyhaven("agent", "stop").status == 0)
        #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n") == 0)
        #expect(try session.keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")

        // A change of the login password: current, new, new again.
        #expect(try pamtester(session, ["chauthtok"], input: "login-pw-1\nlogin-pw-2\nlogin-pw-2\n") == 0)
        #expect(try session.keyhaven("lock-keychain").status == 0)
        #expect(try session.keyhaven("unlock-keychain", "-p", "login-pw-1", "login").status == 51)
        #expect(try session.keyhaven("unlock-keychain", "-p", "login-pw-2", "login").status == 0)
        #expect(try session.keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")
    }

    @Test("A first login creates the login keychain with the login password")
    func firstLogin() throws {
        let session = try setUp()
        defer { tearDown(session) }
        #expect(!FileManager.default.fileExists(atPath: session.home + "/login.keychain-db"))
        #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n") == 0)
        #expect(FileManager.default.fileExists(atPath: session.home + "/login.keychain-db"))
        #expect(try session.keyhaven("lock-keychain").status == 0)
        #expect(try session.keyhaven("unlock-keychain", "-p", "login-pw-1").status == 0)
    }
}
