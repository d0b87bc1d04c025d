import Foundation
import KeychainTestSupport
import Testing

/// `keyhaven import-secrets --from pass` and `--from secret-service` against data made by the
/// real tools: a password store written by `pass insert` with a throw-away gpg key, and a
/// gnome-keyring-daemon in a private session bus filled by `secret-tool`.
@Suite(.freshKeychain(), .serialized)
struct ImportFromIncumbentsTests {
    @Test("pass: each entry a generic password (service = its path, account from login:/user:/username:); dry run; twice; gpg failure writes nothing")
    func passStore() throws {
        try #require(["/usr/bin/pass", "/usr/bin/gpg"].allSatisfy(FileManager.default.isExecutableFile(atPath:)),
                     "scripts/bootstrap installs pass and gnupg")
        var k = try CommandRunner()
        defer { k.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-pass")
        defer {
            _ = try? CommandRunner.execute("/usr/bin/gpgconf", ["--homedir", folder + "/gnupg", "--kill", "gpg-agent"], environment: [:])
            try? FileManager.default.removeItem(atPath: folder)
        }
        k.extraEnvironment["GNUPGHOME"] = folder + "/gnupg"
        k.extraEnvironment["PASSWORD_STORE_DIR"] = folder + "/store"
        let setup = """
            set -e
            mkdir -m 700 "$GNUPGHOME"
            gpg --batch --quiet --passphrase '' --quick-gen-key 'Keyhaven Test <test@keyhaven.invalid>' default default never 2>/dev/null
            pass init test@keyhaven.invalid >/dev/null
            printf 'pw-work\\nlogin: bob@example.com\\nurl: mail.example.com\\n' | pass insert -m email/work >/dev/null
            printf 'pw-bank\\nUsername: carol\\n' | pass insert -m finance/bank >/dev/null
            printf 'pw-plain\\n' | pass insert -m plain >/dev/null
            mkdir -p "$PASSWORD_STORE_DIR/.git" && echo junk > "$PASSWORD_STORE_DIR/.git/x.gpg"
            """
        let made = try CommandRunner.execute("/bin/bash", ["-c", setup], environment: k.environment)
        try #require(made.status == 0, "\(made.output)\(made.error)")
        let dry = try k.run("import-secrets", "--from", "pass", "--dry-run")
        #expect(dry.output.hasPrefix("3 passwords would be imported (dry run"), "\(dry.output)\(dry.error)")
        #expect(try k.run("find-generic-password", "-s", "plain").status == 44)
        let first = try k.run("import-secrets", "--from", "pass")
        #expect(first.output.hasPrefix("3 passwords imported, 0 already there"), "\(first.output)\(first.error)")
        let work = try k.run("find-generic-password", "-s", "email/work", "-a", "bob@example.com", "-w")
        #expect(work.output == "pw-work\nlogin: bob@example.com\nurl: mail.example.com\n\n", "\(work.output)\(work.error)")
        #expect(try k.run("find-generic-password", "-s", "finance/bank", "-a", "carol").status == 0)
        #expect(try k.run("find-generic-password", "-s", "plain", "-a", "").status == 0)
        #expect(try k.run("import-secrets", "--from", "pass").output.hasPrefix("0 passwords imported, 3 already there"))
        // An entry gpg cannot open: nothing of the store is written.
        try Data("not a gpg file".utf8).write(to: URL(fileURLWithPath: folder + "/store/aaa-broken.gpg"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/store/zzz.gpg"))
        let broken = try k.run("import-secrets", "--from", "pass")
        #expect(broken.status != 0 && broken.error.contains("gpg could not decrypt aaa-broken"), "\(broken.error)")
        #expect(try k.run("find-generic-password", "-s", "zzz").status == 44)
    }

    @Test("secret-service: every item of a running gnome-keyring (attributes, label, binary secret) through a DH session")
    func gnomeKeyring() throws {
        let result = try Self.inGnomeKeyringSession("""
            echo "none: $("$KH" import-secrets --from secret-service 2>&1; echo " status=$?")"
            # A login keyring with a password: without one gnome-keyring wants a prompter to make it.
            printf 'gk-pass' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
            for i in $(seq 50); do secret-tool search --all nothing nothing >/dev/null 2>&1 && break; sleep 0.1; done
            printf 'gk-one' | secret-tool store --label 'Mail account' service mail.example.com username dave
            printf 'gk-two' | secret-tool store --label 'Wi-Fi' xdg:schema org.freedesktop.NetworkManager.Connection setting-name 802-11-wireless-security
            printf 'gk\\001\\377bin' | secret-tool store --label 'Binary' service bin.example account erin
            "$KH" import-secrets --from secret-service --dry-run; echo "dry=$?"
            "$KH" import-secrets --from secret-service; echo "first=$?"
            "$KH" import-secrets --from secret-service; echo "second=$?"
            "$KH" find-generic-password -s mail.example.com -a dave -w; echo "mail=$?"
            "$KH" find-generic-password -s bin.example -a erin -w
            "$KH" find-generic-password -l 'Wi-Fi' -w
            # This bus's gnome-keyring only (another test may run its own meanwhile).
            GK=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '/uint32/ {print $2}')
            [ -n "$GK" ] && kill "$GK"
            """)
        let out = result.output
        #expect(out.contains("no program provides org.freedesktop.secrets") && out.contains("status="), "\(out)\n\(result.error)")
        #expect(!out.contains("status=0"))
        #expect(out.contains("3 passwords would be imported (dry run: nothing written)\ndry=0"))
        #expect(out.contains("3 passwords imported, 0 already there\nfirst=0"))
        #expect(out.contains("0 passwords imported, 3 already there\nsecond=0"))
        #expect(out.contains("gk-one\nmail=0"))
        #expect(out.contains("0x676B01FF62696E"))
        #expect(out.contains("gk-two"))
    }

    @Test("ssh import: ~/.ssh's keys kept in the keychain through keyhaven-ssh-agent, a passphrase taken from gnome-keyring's ssh-store item; a key whose passphrase is nowhere is said not kept")
    func sshKeysFromGnomeKeyring() throws {
        // No controlling terminal (setsid): a passphrase found nowhere cannot be asked for.
        let result = try Self.inGnomeKeyringSession("""
            printf 'gk-pass' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
            for i in $(seq 50); do secret-tool search --all nothing nothing >/dev/null 2>&1 && break; sleep 0.1; done
            mkdir -m 700 "$HOME/.ssh"
            ssh-keygen -q -t ed25519 -N 'gk phrase' -C stored -f "$HOME/.ssh/id_ed25519"
            ssh-keygen -q -t ecdsa -N '' -C plain -f "$HOME/.ssh/id_ecdsa"
            ssh-keygen -q -t ed25519 -N 'nowhere' -C unknown -f "$HOME/.ssh/id_unknown"
            # What gnome-keyring's SSH agent stores when the user ticks "unlock automatically".
            printf 'gk phrase' | secret-tool store --label 'Unlock password for: stored' unique "ssh-store:$HOME/.ssh/id_ed25519"
            eval "$("$PRODUCTS/keyhaven-ssh-agent" -s --keychain -a "$HOME/ssh.sock")" >/dev/null
            "$KH" ssh import; echo "import=$?"
            "$KH" ssh list | cut -f1,4
            unset SSH_AUTH_SOCK
            "$KH" ssh import "$HOME/.ssh/id_ecdsa"; echo "noagent=$?"
            kill "$SSH_AGENT_PID"
            GK=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '/uint32/ {print $2}')
            [ -n "$GK" ] && kill "$GK"
            """, tools: ["/usr/bin/ssh-add", "/usr/bin/setsid"], detached: true)
        let out = result.output
        #expect(out.contains("/.ssh/id_ecdsa: kept in the keychain as SHA256:"), "\(out)\n\(result.error)")
        #expect(out.contains("/.ssh/id_ed25519: kept in the keychain as SHA256:"), "\(out)\n\(result.error)")
        #expect(out.contains("/.ssh/id_unknown: not kept: "), "\(out)\n\(result.error)")
        #expect(out.contains("import=1"), "\(out)")
        #expect(out.contains("stored\tkeychain ") && out.contains("plain\tkeychain ") && out.contains("(added by ssh-add, this device only)"), "\(out)")
        #expect(!out.contains("unknown\t"), "\(out)")
        #expect(out.contains("SSH_AUTH_SOCK names no agent") || result.error.contains("SSH_AUTH_SOCK names no agent"), "\(out)\n\(result.error)")
        #expect(out.contains("noagent=") && !out.contains("noagent=0"), "\(out)")
    }

    /// Runs `body` (bash) in a session bus of its own, with HOME and XDG folders in a new folder,
    /// `KH` (the built keyhaven) and `PRODUCTS` (the build folder) set, for the test's keychain
    /// home; `detached`: without a controlling terminal. What it printed, and its errors.
    static func inGnomeKeyringSession(_ body: String, tools: [String] = [], detached: Bool = false) throws -> (output: String, error: String) {
        let needed = ["/usr/bin/dbus-run-session", "/usr/bin/secret-tool", "/usr/bin/gnome-keyring-daemon"] + tools
        try #require(needed.allSatisfy(FileManager.default.isExecutableFile(atPath:)),
                     "scripts/bootstrap installs dbus, libsecret-tools, gnome-keyring and openssh-client")
        let k = try CommandRunner()
        defer { k.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-gk")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let products = CommandRunner.products.path
        let script = """
            export HOME='\(folder)' XDG_DATA_HOME='\(folder)/data' XDG_CONFIG_HOME='\(folder)/config'
            KH='\(products)/keyhaven' PRODUCTS='\(products)'
            \(body)
            """
        try script.write(toFile: folder + "/test.sh", atomically: true, encoding: .utf8)
        let command = ["/usr/bin/dbus-run-session", "--", "/bin/bash", folder + "/test.sh"]
        let result = detached ? try CommandRunner.execute("/usr/bin/setsid", ["-w"] + command, environment: k.environment)
            : try CommandRunner.execute(command[0], Array(command.dropFirst()), environment: k.environment)
        return (result.output, result.error)
    }
}
