import Foundation
import KeychainTestSupport
import Testing

/// Keychain Access's window for real: under Xvfb, with an AT-SPI bus, driven by its controls'
/// accessible names (driver.py, python3-pyatspi). Screenshots of each step are kept in
/// `$KEYHAVEN_SCREENSHOTS` when set, and on failure in the test's folder, which is then kept.
@Suite(.freshKeychain(), .serialized)
struct KeychainAccessWindowTests {
    static let tools = ["/usr/bin/Xvfb", "/usr/bin/dbus-run-session", "/usr/libexec/at-spi-bus-launcher", "/usr/bin/import"]

    static var toolsPresent: Bool {
        tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && (try? CommandRunner.execute("/usr/bin/python3", ["-c", "import pyatspi"], environment: [:]).status) == 0
    }

    @Test("Every view driven by its controls' names: search, live adds and deletes, unlock and lock; New, Settings, Password, Default and Delete Keychain; New Password Item with the generator and meter; an item's attributes saved, its password shown, copied and cleared; its access control with a program chosen in the file chooser; a certificate's details and its PEM and PKCS#12 export; Ctrl+F, Ctrl+C and Delete; the Sync page; the agent gone and back")
    func driveTheWindow() throws {
        try #require(Self.toolsPresent, "scripts/bootstrap installs xvfb, at-spi2-core, python3-pyatspi and imagemagick")
        let runner = try CommandRunner()
        defer { runner.finish() }
        let folder = try TemporaryFolder.make(prefix: "keyhaven-window")
        let shots = ProcessInfo.processInfo.environment["KEYHAVEN_SCREENSHOTS"] ?? folder
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        #expect(try runner.run("add-generic-password", "-a", "ada", "-s", "imap.example.org", "-l", "Mail", "-w", "secret").status == 0)
        #expect(try runner.run("add-internet-password", "-a", "octo", "-s", "github.com", "-r", "htps", "-w", "token").status == 0)
        #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
        #expect(try runner.run("add-generic-password", "-a", "bob", "-s", "vpn", "-w", "x", "work").status == 0)
        #expect(try runner.run("lock-keychain", "work").status == 0)
        // An identity (a certificate with its private key) made by OpenSSL.
        let made = try CommandRunner.execute("/usr/bin/openssl", [
            "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", folder + "/key.pem",
            "-subj", "/CN=Window Identity", "-days", "30", "-out", folder + "/cert.pem"], environment: [:])
        #expect(made.status == 0, "\(made.error)")
        #expect(try CommandRunner.execute("/usr/bin/openssl", ["pkcs12", "-export", "-inkey", folder + "/key.pem", "-in", folder + "/cert.pem",
                                                               "-passout", "pass:p", "-out", folder + "/id.p12"], environment: [:]).status == 0)
        #expect(try runner.run("import", folder + "/id.p12", "-P", "p").status == 0)
        let fingerprint = try CommandRunner.execute("/usr/bin/openssl", ["x509", "-in", folder + "/cert.pem", "-noout", "-fingerprint", "-sha256"],
                                                    environment: [:]).output
        let sha256 = String(fingerprint.split(separator: "=").last ?? "").filter { !$0.isWhitespace }.replacingOccurrences(of: ":", with: " ")
        let built = try CommandRunner.execute("/usr/bin/cc", [SourceTree.root + "/Tests/KeychainAccessWindowTests/clipwatch.c", "-o",
                                                              folder + "/clipwatch", "-lX11", "-lXfixes"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(built.status == 0, "cc builds the clipboard watcher: \(built.error)")
        let out = try Self.drive(runner, folder: folder, variables: ["SHOTS": shots, "SHA256": sha256, "CLIPWATCH": folder + "/clipwatch"])
        let passed = out.contains("driver=0")
        if passed && shots == folder { try? FileManager.default.removeItem(atPath: folder) }
        #expect(passed, "\(out)\nscreenshots in \(shots)")
        for step in ["controls found", "items shown", "search filters", "another program's add and delete shown",
                     "a wrong password is said", "unlocked with the password", "locked again", "a new keychain is made", "settings saved",
                     "password changed", "made default", "keychain deleted", "a new password item is added with a generated password",
                     "attributes saved", "password shown", "password copied and cleared", "program chosen", "access control saved",
                     "certificate shown and exported", "keyboard: search, copy, delete", "sync page", "agent gone said, and reconnected",
                     "the copy is marked for clipboard managers, and cleared on quit"] {
            #expect(out.contains(step + "\n"), "\(step)")
        }
    }

    /// Runs Keychain Access under a new Xvfb with an AT-SPI bus, and driver.py against it with
    /// `variables` (and FOLDER and KH) in its environment: what the driver printed, and
    /// "driver=STATUS" last.
    static func drive(_ runner: CommandRunner, folder: String, variables: [String: String]) throws -> String {
        let products = CommandRunner.products.path
        let driver = SourceTree.root + "/Tests/KeychainAccessWindowTests/driver.py"
        let assignments = variables.merging(["FOLDER": folder, "KH": products + "/keyhaven"]) { $1 }
            .sorted { $0.key < $1.key }.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        // Everything runs in a session of its own (setsid), which is killed whole at the end: the
        // accessibility bus that GTK has the session bus start outlives its parents otherwise.
        // Output goes to a file, so that no leftover holds the test's pipe open.
        let inner = """
            set -u
            exec 3>'\(folder)/display'
            /usr/bin/Xvfb -displayfd 3 -screen 0 1100x700x24 -nolisten tcp >/dev/null 2>&1 &
            for i in $(seq 100); do [ -s '\(folder)/display' ] && break; sleep 0.05; done
            exec 3>&-
            export DISPLAY=":$(cat '\(folder)/display')" GDK_BACKEND=x11
            /usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &
            KEYHAVEN_CLIPBOARD_SECONDS=3 '\(products)/keyhaven-access' > '\(folder)/window.log' 2>&1 &
            \(assignments) /usr/bin/python3 '\(driver)'
            echo "driver=$?"
            """
        try inner.write(toFile: folder + "/inner.sh", atomically: true, encoding: .utf8)
        _ = try CommandRunner.execute("/usr/bin/setsid", ["-w", "/bin/bash", "-c", """
            /usr/bin/dbus-run-session -- /bin/bash '\(folder)/inner.sh' > '\(folder)/out.txt' 2>&1 < /dev/null
            pkill -9 -s $$
            """], environment: runner.environment)
        return (try? String(contentsOfFile: folder + "/out.txt", encoding: .utf8)) ?? ""
    }
}
