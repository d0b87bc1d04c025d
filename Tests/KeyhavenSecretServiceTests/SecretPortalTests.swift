import Foundation
import KeychainTestSupport
import Testing

/// The Secret portal's backend (`org.freedesktop.impl.portal.Secret`) called as xdg-desktop-portal
/// calls it: a Python process that owns the frontend's name passes a pipe's write end and reads
/// the secret from the other.
extension SecretServiceTests {
    /// `portal.py frontend|other REQUEST...`: each request `APP_ID[:closed|:readonly]`; prints
    /// `APP_ID ok RESPONSE LENGTH HEX` or `APP_ID error D-BUS-ERROR-NAME`.
    static let portalClient = """
        import dbus, os, select, sys
        bus = dbus.SessionBus()
        if sys.argv[1] == 'frontend':
            assert bus.request_name('org.freedesktop.portal.Desktop', dbus.bus.NAME_FLAG_DO_NOT_QUEUE) == 1
        backend = dbus.Interface(bus.get_object('org.freedesktop.secrets', '/org/freedesktop/portal/desktop'),
                                 'org.freedesktop.impl.portal.Secret')
        for request in sys.argv[2:]:
            app, _, mode = request.partition(':')
            r, w = os.pipe()
            passed = r if mode == 'readonly' else w
            if mode == 'closed':
                os.close(r)
            try:
                response, results = backend.RetrieveSecret(dbus.ObjectPath('/org/freedesktop/portal/desktop/request/1_1/t'), app,
                                                           dbus.types.UnixFd(passed), dbus.Dictionary({}, signature='sv'))
                os.close(w)
                data = b''
                while select.select([r], [], [], 5)[0]:
                    chunk = os.read(r, 4096)
                    if not chunk:
                        break
                    data += chunk
                print(app or '(empty)', 'ok', int(response), len(data), data.hex())
            except dbus.DBusException as error:
                print(app or '(empty)', 'error', error.get_dbus_name(), file=sys.stdout)
                print('message', error.get_dbus_message(), file=sys.stderr)
            for fd in (r, w):
                try:
                    os.close(fd)
                except OSError:
                    pass
        """

    /// A sandboxed app's request through xdg-desktop-portal's `org.freedesktop.portal.Secret`:
    /// prints `response N` and `secret LENGTH HEX`.
    static let sandboxedApp = """
        import dbus, os, select
        from gi.repository import GLib
        from dbus.mainloop.glib import DBusGMainLoop
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        portal = dbus.Interface(bus.get_object('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop'),
                                'org.freedesktop.portal.Secret')
        r, w = os.pipe()
        loop = GLib.MainLoop()
        def done(response, results):
            print('response', int(response))
            loop.quit()
        handle = portal.RetrieveSecret(dbus.types.UnixFd(w), dbus.Dictionary({'handle_token': 't1'}, signature='sv'))
        bus.add_signal_receiver(done, 'Response', 'org.freedesktop.portal.Request', path=handle)
        os.close(w)
        GLib.timeout_add(10000, loop.quit)
        loop.run()
        data = b''
        while select.select([r], [], [], 2)[0]:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            data += chunk
        print('secret', len(data), data.hex())
        """

    @Test("The Secret portal through the real xdg-desktop-portal, as an ordinary user: each sandboxed app has its own secret of 64 random bytes, the same on every request and after the agent restarts; a program that holds the frontend's name, or calls without it, is refused and nothing is stored",
          .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
    func secretPortal() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-dbusmock (with python3-dbus)")
        try #require(FileManager.default.isExecutableFile(atPath: Self.portalFrontend) && FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap"),
                     "scripts/bootstrap installs xdg-desktop-portal and bubblewrap")
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-portal"), executables: ["keyhaven", "keyhavend"])
        let folder = try session.user.makeFolder(prefix: "keyhaven-portal")
        defer {
            _ = try? Shell.run("/usr/bin/pkill", ["-9", "-u", String(session.user.uid)])
            session.remove()
            try? FileManager.default.removeItem(atPath: folder)
        }
        chmod(folder, 0o755)
        for (name, text) in [("portal.py", Self.portalClient), ("app/get.py", Self.sandboxedApp)] {
            try FileManager.default.createDirectory(atPath: folder + "/app", withIntermediateDirectories: true)
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        // xdg-desktop-portal finds the backend by its .portal file (scripts/install's, named for
        // the test's desktop: xdg-desktop-portal before 1.18 reads UseIn, later ones portals.conf).
        try FileManager.default.createDirectory(atPath: folder + "/portals", withIntermediateDirectories: true)
        let portalFile = try String(contentsOfFile: SourceTree.root + "/contrib/xdg-desktop-portal/keyhaven.portal", encoding: .utf8)
        try (portalFile + "UseIn=keyhaven-test\n").write(toFile: folder + "/portals/keyhaven.portal", atomically: true, encoding: .utf8)
        _ = try Shell.run("/bin/chmod", ["-R", "a+rX", folder])
        let script = """
            set -u
            DIR='\(folder)'; KD='\(session.binaries.path("keyhavend"))'; KH='\(session.binaries.path("keyhaven"))'
            PIDS=()
            trap 'kill -9 ${PIDS[@]} 2>/dev/null; "$KH" agent stop >/dev/null 2>&1; wait 2>/dev/null' EXIT
            agent() {
                "$KD" --secret-service >> "$DIR/agent.log" 2>&1 &
                AGENT=$!; PIDS+=($AGENT)
                for i in $(seq 100); do [ "$(grep -c providing "$DIR/agent.log")" -ge "$1" ] && break; sleep 0.1; done
            }
            portal() { /usr/bin/python3 "$DIR/portal.py" "$@" 2>&1; }
            BUS=${DBUS_SESSION_BUS_ADDRESS#unix:path=}; BUS=${BUS%%,*}
            app() {
                printf '[Application]\\nname=%s\\n\\n[Instance]\\ninstance-id=1\\n' "$1" > "$DIR/flatpak-info"
                /usr/bin/bwrap --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin \\
                    --proc /proc --dev /dev --tmpfs /tmp --ro-bind "$DIR/app" /app --ro-bind "$DIR/flatpak-info" /.flatpak-info \\
                    --bind "$BUS" "$BUS" --unshare-pid --setenv DBUS_SESSION_BUS_ADDRESS "$DBUS_SESSION_BUS_ADDRESS" \\
                    /usr/bin/python3 /app/get.py | tr '\\n' ' ' | sed "s/^/$1 /"; echo
            }
            agent 1
            # A program of the user takes the frontend's name before the portal runs, and asks.
            portal frontend org.example.Stolen
            "$KH" find-generic-password -s org.freedesktop.portal.Secret >/dev/null 2>&1; echo "created=$?"
            XDG_CURRENT_DESKTOP=keyhaven-test XDG_DESKTOP_PORTAL_DIR="$DIR/portals" '\(Self.portalFrontend)' > "$DIR/xdp.log" 2>&1 &
            PIDS+=($!)
            for i in $(seq 100); do grep -q 'org.freedesktop.portal.Desktop acquired' "$DIR/xdp.log" 2>/dev/null && break; sleep 0.1; done
            app org.example.Editor; app org.example.Editor; app org.gnome.Maps
            # A program that does not own the name.
            portal other org.example.Other
            kill $AGENT; wait $AGENT 2>/dev/null
            agent 2
            app org.example.Editor | sed 's/^/restarted /'
            echo "search=$(secret-tool search --all service org.freedesktop.portal.Secret 2>&1 | wc -l)"
            """
        try script.write(toFile: folder + "/test.sh", atomically: true, encoding: .utf8)
        var environment = session.environment
        environment["DISPLAY"] = nil
        let user = session.user
        let result = try CommandRunner.execute("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--",
                                                                   "/usr/bin/dbus-run-session", "--", "/bin/bash", folder + "/test.sh"],
                                               environment: environment)
        let out = result.output
        let lines = out.split(separator: "\n").map(String.init)
        let log = (try? String(contentsOfFile: folder + "/xdp.log", encoding: .utf8)) ?? ""
        func answer(_ prefix: String) -> [String] { lines.first { $0.hasPrefix(prefix + " ") }?.split(separator: " ").map(String.init) ?? [] }
        #expect(answer("org.example.Stolen") == ["org.example.Stolen", "error", "org.freedesktop.DBus.Error.AccessDenied"], "\(out)\n\(result.error)")
        #expect(answer("org.example.Other") == ["org.example.Other", "error", "org.freedesktop.DBus.Error.AccessDenied"], "\(out)")
        #expect(out.contains("created=44"), "nothing is stored for a refused request: \(out)")
        let editor = lines.filter { $0.hasPrefix("org.example.Editor response 0 secret 64 ") }
        #expect(editor.count == 2 && editor[0] == editor[1], "\(out)\n\(result.error)\n\(log)")
        let maps = answer("org.gnome.Maps")
        #expect(maps.count == 6 && maps[4] == "64" && maps[5] != editor.first?.split(separator: " ").last.map(String.init), "\(out)")
        #expect(lines.contains("restarted " + (editor.first ?? "-")), "the same secret after a restart: \(out)")
        #expect(out.contains("search=0"), "Secret Service clients do not see the applications' secrets: \(out)")
    }

    static let portalFrontend = "/usr/libexec/xdg-desktop-portal"
}
