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

    @Test("The Secret portal: each application id has its own secret of 64 random bytes, the same on every request and after the agent restarts; only the frontend is answered; bad ids and descriptors are errors that create nothing")
    func secretPortal() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-dbusmock (with python3-dbus)")
        let result = try session("""
            cat > "$DIR/portal.py" <<'PY'
            \(Self.portalClient)
            PY
            portal() { /usr/bin/python3 "$DIR/portal.py" "$@" 2>&1; }
            portal other org.example.Stolen
            portal frontend '' nodots 1bad.start 'org.example.Closed:closed' 'org.example.ReadOnly:readonly'
            "$KH" find-generic-password -s org.freedesktop.portal.Secret >/dev/null 2>&1; echo "created=$?"
            portal frontend org.example.Editor org.example.Editor org.gnome.Maps
            echo "search=$(secret-tool search --all service org.freedesktop.portal.Secret 2>&1 | wc -l)"
            kill $AGENT; wait $AGENT
            '\(CommandRunner.products.path)/keyhavend' --secret-service >> "$DIR/agent.log" 2>&1 &
            AGENT=$!
            for i in $(seq 100); do [ "$(grep -c providing "$DIR/agent.log")" -ge 2 ] && break; sleep 0.1; done
            portal frontend org.example.Editor | sed 's/^/restarted /'
            """)
        let out = result.output
        let lines = out.split(separator: "\n").map(String.init)
        func answer(_ prefix: String) -> [String] { lines.first { $0.hasPrefix(prefix + " ") }?.split(separator: " ").map(String.init) ?? [] }
        #expect(answer("org.example.Stolen") == ["org.example.Stolen", "error", "org.freedesktop.DBus.Error.AccessDenied"], "\(out)\n\(result.error)")
        for id in ["(empty)", "nodots", "1bad.start", "org.example.Closed", "org.example.ReadOnly"] {
            #expect(answer(id) == [id, "error", "org.freedesktop.DBus.Error.InvalidArgs"], "\(id): \(out)")
        }
        #expect(out.contains("created=44"), "nothing is stored for a refused request: \(out)")
        let editor = lines.filter { $0.hasPrefix("org.example.Editor ok 0 64 ") }
        #expect(editor.count == 2 && editor[0] == editor[1], "\(out)")
        let maps = answer("org.gnome.Maps")
        #expect(maps.count == 5 && maps[1] == "ok" && maps[3] == "64" && maps[4] != editor.first?.split(separator: " ").last.map(String.init))
        #expect(lines.contains("restarted " + (editor.first ?? "-")), "the same secret after a restart: \(out)")
        #expect(out.contains("search=0"), "Secret Service clients do not see the applications' secrets: \(out)")
    }
}
