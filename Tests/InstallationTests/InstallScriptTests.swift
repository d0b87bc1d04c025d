import Foundation
import KeychainTestSupport
import Testing

/// scripts/install (README, "Install"), with the programs this test run built (`--binaries`), so
/// the test builds nothing: every file lands where systemd, D-Bus, man and the shells look.
@Suite(.freshKeychain())
struct InstallScriptTests {
    static let source = SourceTree.root

    /// Runs scripts/install with `home` as HOME; `destdir`: staged there (DESTDIR).
    func install(_ arguments: [String], home: String, destdir: String? = nil) throws -> CommandRunner.Result {
        var environment = try CommandRunner().environment
        environment["HOME"] = home
        environment["DESTDIR"] = destdir
        environment["XDG_CONFIG_HOME"] = nil
        return try CommandRunner.execute("/bin/bash", [Self.source + "/scripts/install"] + arguments, environment: environment)
    }

    @Test("The Secret portal's backend: keyhaven.portal where xdg-desktop-portal looks, and Keyhaven preferred in the user's portals.conf, another backend replaced and the rest kept")
    func secretPortalBackend() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-install")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let prefix = home + "/.local"
        let conf = home + "/.config/xdg-desktop-portal/portals.conf"
        var result = try install(["--prefix", prefix, "--binaries", CommandRunner.products.path], home: home)
        #expect(result.status == 0, "\(result.error)")
        let portal = try String(contentsOfFile: prefix + "/share/xdg-desktop-portal/portals/keyhaven.portal", encoding: .utf8)
        #expect(portal == "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=org.freedesktop.impl.portal.Secret;\n")
        #expect(try String(contentsOfFile: conf, encoding: .utf8) == "[preferred]\norg.freedesktop.impl.portal.Secret=keyhaven\n")
        try "[preferred]\ndefault=gtk\norg.freedesktop.impl.portal.Secret=gnome-keyring\norg.freedesktop.impl.portal.FileChooser=gtk\n"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        result = try install(["--prefix", prefix, "--binaries", CommandRunner.products.path], home: home)
        #expect(result.status == 0)
        #expect(try String(contentsOfFile: conf, encoding: .utf8)
                == "[preferred]\ndefault=gtk\norg.freedesktop.impl.portal.Secret=keyhaven\norg.freedesktop.impl.portal.FileChooser=gtk\n")
        try "# mine\n".write(toFile: conf, atomically: true, encoding: .utf8)
        result = try install(["--prefix", prefix, "--binaries", CommandRunner.products.path], home: home)
        #expect(try String(contentsOfFile: conf, encoding: .utf8) == "# mine\n[preferred]\norg.freedesktop.impl.portal.Secret=keyhaven\n")
    }

    @Test("Installs the programs, manual pages, completion, systemd user units and the D-Bus file under a prefix")
    func installsEverything() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-install")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let prefix = home + "/.local"
        let result = try install(["--prefix", prefix, "--binaries", CommandRunner.products.path], home: home)
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        let files = FileManager.default
        for program in ["keyhaven", "keyhaven-pki", "keyhaven-sync", "keyhavend", "keyhaven-ssh-agent", "git-credential-keyhaven", "keyhaven-access"] {
            #expect(files.isExecutableFile(atPath: "\(prefix)/bin/\(program)"), "\(program)")
        }
        // Keychain Access in the menus, with its icon.
        let entry = try String(contentsOfFile: prefix + "/share/applications/keyhaven-access.desktop", encoding: .utf8)
        #expect(entry.contains("Name=Keychain Access\n") && entry.contains("Exec=\(prefix)/bin/keyhaven-access\n"))
        #expect(entry.contains("Icon=keyhaven-access\n"))
        #expect(files.fileExists(atPath: prefix + "/share/icons/hicolor/scalable/apps/keyhaven-access.svg"))
        for page in ["keyhaven", "keyhavend", "keyhaven-ssh-agent", "git-credential-keyhaven"] {
            #expect(files.fileExists(atPath: "\(prefix)/share/man/man1/\(page).1"))
        }
        let bash = try String(contentsOfFile: prefix + "/share/bash-completion/completions/keyhaven", encoding: .utf8)
        #expect(bash.contains("find-generic-password"))
        #expect(try String(contentsOfFile: prefix + "/share/zsh/site-functions/_keyhaven", encoding: .utf8).contains("#compdef keyhaven"))
        #expect(files.fileExists(atPath: prefix + "/share/fish/vendor_completions.d/keyhaven.fish"))
        // Under the home folder, units go where systemd's user manager reads them.
        let unit = try String(contentsOfFile: prefix + "/share/systemd/user/keyhaven-secret-service.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/keyhavend --secret-service") && !unit.contains("@BINDIR@"))
        #expect(unit.contains("BusName=org.freedesktop.secrets"))
        let agentUnit = try String(contentsOfFile: prefix + "/share/systemd/user/keyhavend.service", encoding: .utf8)
        #expect(agentUnit.contains("ExecStart=\(prefix)/bin/keyhavend\n"))
        // The session's SSH agent: systemd owns the socket and sets SSH_AUTH_SOCK for the session.
        let sshSocket = try String(contentsOfFile: prefix + "/share/systemd/user/keyhaven-ssh-agent.socket", encoding: .utf8)
        #expect(sshSocket.contains("ListenStream=%t/keyhaven/ssh\n") && sshSocket.contains("SocketMode=0600\n"))
        #expect(sshSocket.contains("systemctl --user set-environment SSH_AUTH_SOCK=%t/keyhaven/ssh\n"))
        let sshService = try String(contentsOfFile: prefix + "/share/systemd/user/keyhaven-ssh-agent.service", encoding: .utf8)
        #expect(sshService.contains("ExecStart=\(prefix)/bin/keyhaven-ssh-agent -D --keychain\n"))
        // systemd reads every unit without a complaint (an unknown key is only a warning to it).
        let runtime = try TemporaryFolder.make(prefix: "keyhaven-install-runtime")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        for unit in ["keyhaven-ssh-agent.socket", "keyhaven-ssh-agent.service", "keyhavend.service", "keyhaven-secret-service.service"] {
            let verified = try CommandRunner.execute("/usr/bin/systemd-analyze", ["verify", "--man=no", "--user", prefix + "/share/systemd/user/" + unit],
                                                     environment: ["HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin"])
            #expect(verified.status == 0 && verified.error.isEmpty, "\(unit): \(verified.error)")
        }
        let activation = try String(contentsOfFile: prefix + "/share/dbus-1/services/org.freedesktop.secrets.service", encoding: .utf8)
        #expect(activation.contains("Name=org.freedesktop.secrets"))
        #expect(activation.contains("Exec=\(prefix)/bin/keyhavend --secret-service"))
        #expect(activation.contains("SystemdService=keyhaven-secret-service.service"))
        // No $ORIGIN in any installed program's RUNPATH (a library put beside it would load into it);
        // the build's own programs carry it.
        for program in ["keyhaven", "keyhaven-pki", "keyhaven-sync", "keyhavend", "git-credential-keyhaven"] {
            let runpath = try CommandRunner.execute("/usr/bin/patchelf", ["--print-rpath", "\(prefix)/bin/\(program)"], environment: [:])
            #expect(runpath.status == 0 && !runpath.output.contains("ORIGIN"), "\(program): \(runpath.output)")
        }
        let built = try CommandRunner.execute("/usr/bin/patchelf", ["--print-rpath", CommandRunner.products.appendingPathComponent("keyhavend").path],
                                              environment: [:])
        #expect(built.output.contains("$ORIGIN"), "the test sees what it would see unmended: \(built.output)")
        // The installed program runs.
        let version = try CommandRunner.execute(prefix + "/bin/keyhavend", ["--help"], environment: [:])
        #expect(version.status == 0 && version.output.contains("--secret-service"))
    }

    @Test("A prefix outside the home folder takes lib/systemd/user; DESTDIR stages without changing the paths written")
    func stagesForPackages() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-install")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let result = try install(["--prefix", "/usr/local", "--binaries", CommandRunner.products.path], home: home, destdir: home + "/stage")
        #expect(result.status == 0, "\(result.error)")
        let unit = try String(contentsOfFile: home + "/stage/usr/local/lib/systemd/user/keyhavend.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/keyhavend\n"))
        #expect(FileManager.default.fileExists(atPath: home + "/stage/usr/local/share/xdg-desktop-portal/portals/keyhaven.portal"))
        #expect(FileManager.default.fileExists(atPath: home + "/stage/etc/xdg/xdg-desktop-portal/portals.conf"))
    }

    @Test("--debian stages what contrib/debian's packages take: the sync server's files, the PAM profile, zsh's vendor completion, unstripped programs, the portal's line under the prefix and nothing in /etc/xdg; every staged file is in one package's .install list")
    func debianLayout() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-install")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let result = try install(["--debian", "--prefix", "/usr", "--binaries", CommandRunner.products.path], home: home, destdir: home + "/stage")
        #expect(result.status == 0, "\(result.error)")
        let stage = home + "/stage"
        func text(_ path: String) -> String { (try? String(contentsOfFile: stage + path, encoding: .utf8)) ?? "" }
        #expect(text("/etc/default/keyhaven-sync-server").contains("OPTIONS=\"\"\n"))
        #expect(text("/usr/share/pam-configs/keyhaven").contains("Default: no\n"))
        #expect(text("/usr/share/zsh/vendor-completions/_keyhaven").contains("#compdef keyhaven"))
        #expect(text("/usr/share/xdg-desktop-portal/portals.conf") == "[preferred]\norg.freedesktop.impl.portal.Secret=keyhaven\n")
        #expect(!FileManager.default.fileExists(atPath: stage + "/etc/xdg"))
        #expect(FileManager.default.fileExists(atPath: stage + "/usr/share/doc/keyhaven-sync-server/examples/nginx-keyhaven-sync.conf"))
        // dh_strip strips, keeping the symbols for the -dbgsym package.
        let sections = try CommandRunner.execute("/usr/bin/readelf", ["-S", stage + "/usr/bin/keyhaven-sync-server"], environment: [:])
        #expect(sections.output.contains(".symtab"))
        // The sync server's system unit, as scripts/package gives it to dh_installsystemd.
        let unit = try String(contentsOfFile: Self.source + "/contrib/systemd/keyhaven-sync-server.service", encoding: .utf8)
            .replacingOccurrences(of: "@BINDIR@", with: CommandRunner.products.path)
        #expect(unit.contains("--database-url-file ${CREDENTIALS_DIRECTORY}/database-url $OPTIONS\n"))
        #expect(unit.contains("ConditionPathExists=/etc/keyhaven/sync-server/database-url\n") && unit.contains("DynamicUser=yes\n"))
        try unit.write(toFile: home + "/keyhaven-sync-server.service", atomically: true, encoding: .utf8)
        let runtime = try TemporaryFolder.make(prefix: "keyhaven-install-runtime")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let verified = try CommandRunner.execute("/usr/bin/systemd-analyze", ["verify", "--man=no", home + "/keyhaven-sync-server.service"],
                                                 environment: ["HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin"])
        #expect(!verified.error.contains("keyhaven-sync-server.service:"), "\(verified.error)")
        // Every staged file is claimed by one of the packages (dh_missing refuses a build that leaves one out).
        let lists = try ["keyhaven", "keyhaven-access", "keyhaven-sync-server"].flatMap { package in
            try String(contentsOfFile: Self.source + "/contrib/debian/\(package).install", encoding: .utf8).split(separator: "\n").map(String.init)
        }
        let staged = FileManager.default.enumerator(atPath: stage)?.compactMap { $0 as? String }.filter { path in
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: stage + "/" + path, isDirectory: &folder) && !folder.boolValue
        } ?? []
        #expect(staged.contains("usr/bin/keyhaven-sync-server") && staged.count >= 30, "\(staged)")
        for path in staged {
            #expect(lists.contains { path == $0 || path.hasPrefix($0 + "/") }, "\(path) is in no package")
        }
    }

    @Test("Bad options: a relative prefix, an unknown option, a folder without the programs")
    func refusesBadOptions() throws {
        let home = try TemporaryFolder.make(prefix: "keyhaven-install")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let relative = try install(["--prefix", "relative/dir", "--binaries", CommandRunner.products.path], home: home)
        #expect(relative.status == 2 && relative.error.contains("absolute"))
        let unknown = try install(["--frobnicate"], home: home)
        #expect(unknown.status == 2 && unknown.error.contains("unknown option --frobnicate"))
        let empty = try install(["--prefix", home + "/p", "--binaries", home], home: home)
        #expect(empty.status == 1 && empty.error.contains("is not built"))
        #expect(!FileManager.default.fileExists(atPath: home + "/p"))
    }
}
