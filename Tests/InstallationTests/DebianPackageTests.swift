import Foundation
import KeychainTestSupport
import Testing

/// When the package test runs: asked for, and as root.
enum PackageTestSwitch {
    static var isOn: Bool { getuid() == 0 && ProcessInfo.processInfo.environment["KEYHAVEN_PACKAGE_TESTS"] == "1" }
    static let reason: Comment = "builds Debian's packages (a release build) and installs them: set KEYHAVEN_PACKAGE_TESTS=1 and run as root"
}

/// Debian's packages (scripts/package, docs/packages.md): built, checked by lintian, installed on
/// this machine, used as an ordinary user, upgraded, removed, purged and installed again. It makes
/// a release build of every program, too slow for every run: it runs when KEYHAVEN_PACKAGE_TESTS=1,
/// as root (dpkg), as `.ci/run` does with that switch. Everything it installs it purges again.
@Suite(.serialized, .enabled(if: PackageTestSwitch.isOn, PackageTestSwitch.reason))
struct DebianPackageTests {
    static let source = SourceTree.root
    static let packages = ["keyhaven", "keyhaven-access", "keyhaven-sync-server"]
    static let activation = "/usr/share/dbus-1/services/org.freedesktop.secrets.service"

    /// Runs a shell command as root with this process's environment (the toolchain on PATH).
    @discardableResult
    func root(_ command: String) throws -> CommandRunner.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["DEBIAN_FRONTEND"] = "noninteractive"
        return try CommandRunner.execute("/bin/sh", ["-c", command], environment: environment)
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// The packages' files in `folder` (not the -dbgsym ones), for apt.
    func debs(_ folder: String, _ version: String) -> String {
        Self.packages.map { "\(folder)/\($0)_\(version)_*.deb" }.joined(separator: " ")
    }

    @Test("Built, lintian-clean, installed beside nothing else, used as an ordinary user, upgraded, removed and purged without touching the keychain, installed again")
    func lifecycle() throws {
        let dist = Self.source + "/dist"
        let previous = try TemporaryFolder.make(prefix: "keyhaven-previous-packages")
        let user = try LocalUser.make("khpackage")
        let session = (home: try user.makeFolder(prefix: "keyhaven-package-home"), runtime: try user.makeFolder(prefix: "keyhaven-package-run"))
        let environment = ["KEYHAVEN_HOME": session.home, "XDG_RUNTIME_DIR": session.runtime, "HOME": session.home,
                           "PATH": "/usr/bin:/bin"]
        func asUser(_ arguments: [String]) throws -> CommandRunner.Result {
            try CommandRunner.execute(arguments[0], Array(arguments.dropFirst()), environment: environment, as: user)
        }
        // A script that leaves a daemon behind (the agent, or the process D-Bus activation starts):
        // waited for alone, with no descriptor of this process, its output in the user's files.
        func asUserLeavingDaemon(_ script: String) throws -> (status: Int32, output: String, error: String) {
            let (out, err) = (session.runtime + "/script.out", session.runtime + "/script.err")
            let status = try Shell.runLeavingDaemon("/usr/bin/env", ["-i"] + environment.map { "\($0.key)=\($0.value)" } + [
                "/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--",
                "/bin/sh", "-c", "(\(script)) >\(out) 2>\(err) </dev/null"])
            return (status, text(out), text(err))
        }
        defer {
            _ = try? asUser(["/usr/bin/keyhaven", "agent", "stop"])
            _ = try? root("dpkg --purge \(Self.packages.joined(separator: " ")) >/dev/null 2>&1")
            for folder in [previous, session.home, session.runtime] { try? FileManager.default.removeItem(atPath: folder) }
        }

        // Built: this version into dist/, and the one "before" it to upgrade from; in a build
        // folder of its own, since `swift test` holds .build while it runs.
        let package = "\(Self.source)/scripts/package --scratch-path \(Self.source)/.build-package"
        var built = try root(package)
        try #require(built.status == 0, "\(built.output.suffix(3000))\n\(built.error.suffix(3000))")
        let version = try #require(built.output.split(separator: "\n").last.flatMap { line in
            line.split(separator: "/").last?.split(separator: "_").dropFirst().first.map(String.init)
        })
        built = try root("\(package) --version \(version)~previous --output \(previous)")
        try #require(built.status == 0, "\(built.error.suffix(3000))")

        // lintian: no error and no warning that is not overridden with its reason.
        let lint = try root("lintian --fail-on error,warning --tag-display-limit 0 \(dist)/*_\(version)_*.deb")
        #expect(lint.status == 0, "\(lint.output)\n\(lint.error)")

        // Depends from dpkg-shlibdeps: the system's libraries, never Swift's runtime.
        let depends = try root("for p in \(Self.packages.joined(separator: " ")); do dpkg-deb -f \(dist)/${p}_\(version)_*.deb Depends; done")
        for library in ["libc6", "libssl3", "libsqlite3-0", "libsystemd0", "libtss2-esys", "libpwquality1", "libgtk-4-1", "libpam0g"] {
            #expect(depends.output.contains(library), "\(library) in \(depends.output)")
        }
        #expect(!depends.output.lowercased().contains("swift"))
        let provides = try root("dpkg-deb -f \(dist)/keyhaven_\(version)_*.deb Provides Conflicts")
        #expect(provides.output == "Provides: org.freedesktop.secrets\nConflicts: org.freedesktop.secrets\n")

        // Nothing but the three packages is installed: what they need is on the machine already.
        let plan = try root("apt-get install -s --no-install-recommends \(debs(previous, "\(version)~previous"))")
        let installing = plan.output.split(separator: "\n").filter { $0.hasPrefix("Inst ") }.map { String($0.split(separator: " ")[1]) }
        #expect(installing.sorted() == Self.packages, "\(plan.output)")
        let gnomeKeyring = text(Self.activation).contains("gnome-keyring")
        var installed = try root("apt-get install -y -q --no-install-recommends \(debs(previous, "\(version)~previous"))")
        try #require(installed.status == 0, "\(installed.output)\n\(installed.error)")

        // Files in their places.
        for program in ["keyhaven", "keyhaven-pki", "keyhaven-sync", "keyhavend", "keyhaven-ssh-agent", "git-credential-keyhaven",
                        "keyhaven-access", "keyhaven-sync-server"] {
            let elf = try root("readelf -d -S /usr/bin/\(program)")
            #expect(elf.status == 0 && !elf.output.contains("ORIGIN") && !elf.output.contains(".debug_info"), "\(program): stripped, no $ORIGIN")
        }
        let multiarch = try root("dpkg-architecture -qDEB_HOST_MULTIARCH").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(exists("/lib/\(multiarch)/security/pam_keyhaven.so"))
        #expect(text(Self.activation).contains("Exec=/usr/bin/keyhavend --secret-service\nSystemdService=keyhaven-secret-service.service"))
        #expect(try root("dpkg-divert --listpackage \(Self.activation)").output == "keyhaven\n")
        if gnomeKeyring { #expect(text(Self.activation + ".keyhaven-diverted").contains("gnome-keyring-daemon")) }
        #expect(text("/usr/lib/systemd/user/keyhavend.service").contains("ExecStart=/usr/bin/keyhavend\n"))
        #expect(exists("/usr/share/xdg-desktop-portal/portals/keyhaven.portal"))
        #expect(text("/usr/share/xdg-desktop-portal/portals.conf") == "[preferred]\norg.freedesktop.impl.portal.Secret=keyhaven\n")
        #expect(exists("/usr/share/man/man1/keyhaven.1.gz") && exists("/usr/share/man/man1/keyhaven-access.1.gz"))
        #expect(exists("/usr/share/zsh/vendor-completions/_keyhaven") && exists("/usr/share/bash-completion/completions/keyhaven"))
        #expect(text("/usr/share/applications/keyhaven-access.desktop").contains("Exec=/usr/bin/keyhaven-access\n"))
        #expect(exists("/usr/share/doc/keyhaven-sync-server/examples/nginx-keyhaven-sync.conf"))
        // Started in every user's session: the agent with the Secret Service and the SSH agent's
        // socket; the sync server waits for its configuration.
        #expect(exists("/etc/systemd/user/default.target.wants/keyhaven-secret-service.service"))
        #expect(exists("/etc/systemd/user/sockets.target.wants/keyhaven-ssh-agent.socket"))
        #expect(!exists("/etc/systemd/user/default.target.wants/keyhavend.service"))
        #expect(!exists("/etc/systemd/system/multi-user.target.wants/keyhaven-sync-server.service"))
        let verify = try root("systemd-analyze verify --man=no $(dpkg -L keyhaven-sync-server | grep 'systemd/system/keyhaven-sync-server.service$')")
        #expect(verify.status == 0, "\(verify.error)")

        // PAM: offered to pam-auth-update, off until enabled.
        let stacks = ["/etc/pam.d/common-auth", "/etc/pam.d/common-session", "/etc/pam.d/common-password"]
        #expect(stacks.allSatisfy { !text($0).contains("pam_keyhaven") })
        try root("pam-auth-update --enable keyhaven")
        #expect(stacks.allSatisfy { text($0).contains("optional\tpam_keyhaven.so") }, "\(stacks.map(text))")
        try root("pam-auth-update --disable keyhaven")
        #expect(stacks.allSatisfy { !text($0).contains("pam_keyhaven") })

        // As an ordinary user: the installed command stores and reads; the agent it starts is the
        // installed one.
        var result = try asUser(["/usr/bin/keyhaven", "add-generic-password", "-s", "package.test", "-a", "me", "-w", "first secret"])
        #expect(result.status == 0, "\(result.error)")
        result = try asUser(["/usr/bin/keyhaven", "find-generic-password", "-s", "package.test", "-w"])
        #expect(result.output == "first secret\n", "\(result.error)")
        // No user manager here (CI has no systemd): the agent started directly, as ExecStart has it,
        // and the Secret Service by D-Bus activation of the installed file on a session bus.
        _ = try asUser(["/usr/bin/keyhaven", "agent", "stop"])
        let started = try asUserLeavingDaemon("""
            /usr/bin/keyhavend </dev/null >/dev/null 2>&1 &
            echo $!
            for i in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/keyhaven/agent.sock" ] && exit 0; sleep 0.1; done; exit 1
            """)
        #expect(started.status == 0, "the agent listens: \(started.error)")
        let agent = started.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try root("readlink /proc/\(agent)/exe").output == "/usr/bin/keyhavend\n")
        // The agent is undumpable, so its user cannot read its /proc/PID/exe: the bus name's owner
        // is compared with the agent by pid.
        let script = """
            printf %s 'second secret' | secret-tool store --label='From secret-tool' service package.dbus account me || exit 1
            secret-tool lookup service package.dbus account me; echo
            dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '/uint32/ {print $2}'
            """
        let looked = try asUserLeavingDaemon("/usr/bin/dbus-run-session -- /bin/sh -c '\(script.replacingOccurrences(of: "'", with: "'\\''"))'")
        // The activated keyhavend says on the bus's output that it handed the name to the agent.
        #expect(looked.output.contains("keyhavend: the running agent (pid \(agent)) provides org.freedesktop.secrets"), "\(looked.error)")
        #expect(looked.output.hasSuffix("\nsecond secret\n\(agent)\n"), "\(looked.output)\n\(looked.error)")
        let keychain = session.home + "/login.keychain-db"
        #expect(exists(keychain))

        // Upgraded to this version: every keychain reads as it was.
        _ = try asUser(["/usr/bin/keyhaven", "agent", "stop"])
        installed = try root("apt-get install -y -q --no-install-recommends \(debs(dist, version))")
        try #require(installed.status == 0, "\(installed.output)\n\(installed.error)")
        #expect(try root("/usr/bin/keyhaven --version").output == version + "\n")
        // (secret-tool's item is secret-tool's: keyhaven would be asked first, and here no one can answer.)
        result = try asUser(["/usr/bin/keyhaven", "find-generic-password", "-s", "package.test", "-w"])
        #expect(result.output == "first secret\n", "\(result.error)")
        _ = try asUser(["/usr/bin/keyhaven", "agent", "stop"])

        // Removed, then purged: the programs and the package's files go, the keychain stays.
        let removed = try root("apt-get remove -y -q \(Self.packages.joined(separator: " "))")
        #expect(removed.status == 0, "\(removed.error)")
        #expect(!exists("/usr/bin/keyhaven") && exists(keychain))
        #expect(exists("/etc/default/keyhaven-sync-server"), "a conffile stays until purge")
        #expect(try root("dpkg-divert --listpackage \(Self.activation)").output.isEmpty)
        if gnomeKeyring { #expect(text(Self.activation).contains("gnome-keyring-daemon")) } else { #expect(!exists(Self.activation)) }
        let purged = try root("apt-get purge -y -q \(Self.packages.joined(separator: " "))")
        #expect(purged.status == 0, "\(purged.error)")
        #expect(!exists("/etc/default/keyhaven-sync-server") && !exists("/etc/systemd/user/default.target.wants/keyhaven-secret-service.service"))
        #expect(exists(keychain))

        // Installed again: the secrets are there.
        installed = try root("apt-get install -y -q --no-install-recommends \(debs(dist, version))")
        try #require(installed.status == 0, "\(installed.error)")
        result = try asUser(["/usr/bin/keyhaven", "find-generic-password", "-s", "package.test", "-w"])
        #expect(result.output == "first secret\n", "\(result.error)")
    }
}
