import Foundation
import KeychainTestSupport
import Testing

/// pam_keyhaven (contrib/pam) through real PAM: Debian's pamtester runs a PAM service the test
/// writes to /etc/pam.d, for a user the test creates with a login password, so it needs root.
@Suite("pam_keyhaven", .freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct PAMModuleTests {
    static let service = "keyhaven-pam-test"

    /// Builds the module with the system compiler, writes the PAM service for the session's
    /// executables (`keyhaven`: the program the module runs), gives the user a login password.
    /// The keychain home and runtime folder reach the module through PAM's environment (pam_env,
    /// `home`: the session's by default), as pam_systemd's do on a real system; `homeInPAM`
    /// false: no keychain home there (the module takes the user's default). Undone by
    /// ``tearDown(_:)``.
    func setUp(keyhaven: String? = nil, home: String? = nil, homeInPAM: Bool = true, authArguments: String = "") throws -> UserKeychainSession {
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-pam"))
        let source = SourceTree.root + "/contrib/pam/pam_keyhaven.c"
        let module = session.binaries.path("pam_keyhaven.so")
        #expect(try Shell.run("/usr/bin/cc", ["-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", module, source, "-lpam"]) == 0,
                "pam_keyhaven.c does not build (scripts/bootstrap installs libpam0g-dev)")
        let environment = session.binaries.path("pam_env.conf")
        try ((homeInPAM ? "KEYHAVEN_HOME DEFAULT=\(home ?? session.home)\n" : "") + "XDG_RUNTIME_DIR DEFAULT=\(session.runtime)\n")
            .write(toFile: environment, atomically: true, encoding: .utf8)
        let line = "\(module) keyhaven=\(keyhaven ?? session.binaries.path("keyhaven"))"
        try """
            auth     required pam_unix.so
            auth     optional \(line)\(authArguments)
            session  required pam_env.so conffile=\(environment) readenv=0
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

    /// pamtester as root for the session's user, answering its prompts with `input`, with
    /// `environment` as its process environment (the module takes nothing from it); its status.
    func pamtester(_ session: UserKeychainSession, _ operations: [String], input: String,
                   environment: [String: String] = ["PATH": "/usr/bin:/bin"]) throws -> Int32 {
        try Shell.run("/usr/bin/pamtester", [Self.service, session.user.name] + operations, input: input, environment: environment)
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
        // (open_session first: pam_env gives the module the keychain home, as a login session would.)
        #expect(try pamtester(session, ["open_session", "chauthtok"], input: "login-pw-1\nlogin-pw-2\nlogin-pw-2\n") == 0)
        #expect(try session.keyhaven("lock-keychain").status == 0)
        #expect(try session.keyhaven("unlock-keychain", "-p", "login-pw-1", "login").status == 51)
        #expect(try session.keyhaven("unlock-keychain", "-p", "login-pw-2", "login").status == 0)
        #expect(try session.keyhaven("find-generic-password", "-a", "before-login", "-w").output == "kept\n")
    }

    @Test("In a screen locker's service (`unlock`), the screen's unlock unlocks the login keychain: the locker runs as the user, so its environment names the keychain; under su, root's environment names nothing")
    func screenLockerUnlocks() throws {
        let session = try setUp(authArguments: " unlock")
        defer { tearDown(session) }
        #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n") == 0)
        #expect(try session.keyhaven("lock-keychain").status == 0)
        let user = session.user
        // The screen locker: pam_authenticate only, as the user, in the user's session environment.
        func locker(_ password: String) throws -> Int32 {
            try Shell.run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "/usr/bin/pamtester",
                                               Self.service, user.name, "authenticate"],
                          input: password + "\n", environment: session.environment)
        }
        let before = try session.keyhaven("show-keychain-info", "login")
        #expect(before.output.hasSuffix(" locked\n"), "\(before)")
        #expect(try locker("wrong") != 0)
        #expect(try session.keyhaven("show-keychain-info", "login").output.hasSuffix(" locked\n"))
        #expect(try locker("login-pw-1") == 0)
        #expect(try session.keyhaven("show-keychain-info", "login").output.hasSuffix(" unlocked\n"))
        // Root authenticating the user (su): its own environment is not the user's session.
        #expect(try session.keyhaven("lock-keychain").status == 0)
        #expect(try pamtester(session, ["authenticate"], input: "login-pw-1\n", environment: session.environment) == 0)
        let info = try session.keyhaven("show-keychain-info", "login")
        #expect(info.output.hasSuffix(" locked\n"), "\(info)")
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

    @Test("Under su the caller's environment chooses nothing: its KEYHAVEN_HOME is not used, a home the user does not own is refused, no descriptor is inherited")
    func callerChoosesNothing() throws {
        // Another user's folder, open to all: where the caller would have the password go.
        let caller = try LocalUser.make("keyhaven-attacker")
        let trap = try caller.makeFolder(prefix: "keyhaven-trap")
        chmod(trap, 0o777)
        defer { try? FileManager.default.removeItem(atPath: trap) }
        do {
            // No keychain home in PAM's environment (a real su): the user's default one, in its home
            // folder. The caller's process environment names the trap: before, the module took it
            // (getenv).
            let session = try setUp(homeInPAM: false)
            let folder = try session.user.makeFolder(prefix: "keyhaven-pam-user")
            #expect(try Shell.run("/usr/sbin/usermod", ["-d", folder, session.user.name]) == 0)
            defer {
                tearDown(session)
                try? FileManager.default.removeItem(atPath: folder)
            }
            let callers = ["PATH": "/usr/bin:/bin", "KEYHAVEN_HOME": trap, "XDG_DATA_HOME": trap]
            #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n", environment: callers) == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: trap).isEmpty, "nothing was made in the caller's folder")
            let own = folder + "/.local/share/keyhaven"
            #expect(FileManager.default.fileExists(atPath: own + "/login.keychain-db"), "the user's own keychain took the password")
            let environment = ["KEYHAVEN_HOME": own, "XDG_RUNTIME_DIR": session.runtime, "PATH": "/usr/bin:/bin", "HOME": folder]
            #expect(try session.user.run(session.binaries.path("keyhaven"), ["lock-keychain"], environment: environment).status == 0)
            #expect(try session.user.run(session.binaries.path("keyhaven"), ["unlock-keychain", "-p", "login-pw-1"], environment: environment).status == 0)
            _ = try? session.user.run(session.binaries.path("keyhaven"), ["agent", "stop"], environment: environment)
        }
        do {
            // PAM's own environment naming a home the user does not own: refused.
            let session = try setUp(home: trap)
            defer { tearDown(session) }
            #expect(try pamtester(session, ["authenticate", "open_session"], input: "login-pw-1\n") == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: trap).isEmpty, "nothing was made in another user's folder")
        }
        do {
            // The command the module runs inherits only its standard descriptors, not the caller's.
            let wrapper = try TemporaryFolder.make(prefix: "keyhaven-pam-wrapper")
            chmod(wrapper, 0o755)
            defer { try? FileManager.default.removeItem(atPath: wrapper) }
            let session = try setUp(keyhaven: wrapper + "/keyhaven")
            defer { tearDown(session) }
            try ExecutableFile.write("""
                #!/bin/sh
                ls -l /proc/$$/fd > '\(session.home)/descriptors'
                exec '\(session.binaries.path("keyhaven"))' "$@"
                """, to: wrapper + "/keyhaven", mode: 0o755)
            let status = try Shell.run("/bin/sh", ["-c", "exec 7</etc/hostname 9</etc/passwd; exec /usr/bin/pamtester \(Self.service) \(session.user.name) authenticate open_session"],
                                       input: "login-pw-1\n", environment: ["PATH": "/usr/bin:/bin"])
            #expect(status == 0)
            // (The shell's own descriptors, the script among them, are there too.)
            let descriptors = try String(contentsOfFile: session.home + "/descriptors", encoding: .utf8)
            #expect(descriptors.contains("/descriptors") && !descriptors.contains("/etc/hostname") && !descriptors.contains("/etc/passwd"),
                    "\(descriptors)")
        }
    }
}
