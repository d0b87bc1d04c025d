import Foundation
import KeychainTestSupport
import Testing

/// The Secret Service provider (docs/secret-service.md) with real clients on a private session
/// bus (dbus-run-session): secret-tool (libsecret), Python's secretstorage (its DH session) and
/// keyring, dbus-send for malformed calls, gnome-keyring-daemon as the other provider. The bus,
/// the provider and its clients run as an ordinary user the test makes, as on a desktop.
@Suite(.freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct SecretServiceTests {
    static let tools = ["/usr/bin/dbus-run-session", "/usr/bin/secret-tool", "/usr/bin/dbus-send", "/usr/bin/python3"]

    /// Runs `body` (bash) as an ordinary user in a private session bus with keyhavend
    /// --secret-service started on it (its log in $DIR/agent.log); returns what the script printed.
    func session(_ body: String, pinentry: Bool = false) throws -> CommandRunner.Result {
        let user = try UserKeychainSession(try LocalUser.make("keyhaven-ss-user"),
                                           executables: ["keyhaven", "keyhavend", "keyhaven-test-helper"])
        var runner = CommandRunner(as: user)
        let folder = try user.user.makeFolder(prefix: "keyhaven-dbus")
        defer {
            runner.finish()
            user.remove()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let products = user.binaries.folder
        if pinentry {
            // Types the password in $DIR/pin at GETPIN, logs what it was told.
            let path = try ScriptedPinentry.write(in: folder)
            chown(path, user.user.uid, user.user.gid)
            runner.extraEnvironment["KEYHAVEN_PINENTRY"] = path
        }
        let script = """
            set -u
            DIR='\(folder)'; KH='\(products)/keyhaven'
            start_agent() {
                '\(products)/keyhavend' --secret-service > "$DIR/agent.log" 2>&1 &
                AGENT=$!
                for i in $(seq 100); do grep -q providing "$DIR/agent.log" 2>/dev/null && break; sleep 0.1; done
            }
            # A new agent: what lived in the old one's memory is gone.
            restart_agent() { kill $AGENT; wait $AGENT 2>/dev/null; start_agent; }
            trap 'kill $AGENT 2>/dev/null; wait $AGENT 2>/dev/null' EXIT
            start_agent
            \(body)
            """
        try script.write(toFile: folder + "/test.sh", atomically: true, encoding: .utf8)
        var environment = runner.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        return try CommandRunner.execute("/usr/bin/dbus-run-session", ["--", "/bin/bash", folder + "/test.sh"], environment: environment,
                                         as: user.user)
    }

    func toolsPresent() -> Bool {
        Self.tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("secret-tool stores, looks up, searches and clears; the keychain API and secret-tool see the same items")
    func secretTool() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            printf 's3cret pass' | secret-tool store --label 'Test item' service myservice username bob; echo "store=$?"
            echo "lookup=$(secret-tool lookup service myservice username bob)"
            secret-tool search --all service myservice 2>&1 | grep -E '^(label|secret|attribute)'
            printf 'other' | secret-tool store --label git server github.com user alice protocol https; echo "store2=$?"
            echo "lookup2=$(secret-tool lookup server github.com user alice)"
            printf 'changed' | secret-tool store --label 'Test item' service myservice username bob
            echo "replaced=$(secret-tool lookup service myservice username bob)"
            "$KH" find-generic-password -s myservice -a bob 2>&1 | grep -E '"svce"|"acct"'
            "$KH" find-generic-password -s myservice -a bob -w >/dev/null 2>&1; echo "untrusted=$?"
            "$KH" add-generic-password -s swiftsvc -a eve -w 'from the API' -A; echo "add=$?"
            echo "fromapi=$(secret-tool lookup service swiftsvc account eve)"
            # SecItemAdd in a Swift program (through the agent, in its application group): secret-tool
            # finds it by service and account.
            KEYHAVEN_AGENT=on "$(dirname "$KH")/keyhaven-test-helper" item add swiftapi; echo "helper=$?"
            secret-tool search --all service access 2>&1 | grep -E '^attribute.account'
            secret-tool clear service myservice username bob; echo "clear=$?"
            secret-tool lookup service myservice username bob; echo "gone=$?"
            """)
        let out = result.output
        #expect(out.contains("store=0"), "\(out)\n\(result.error)")
        #expect(out.contains("lookup=s3cret pass"))
        #expect(out.contains("label = Test item") && out.contains("secret = s3cret pass"))
        #expect(out.contains("attribute.service = myservice") && out.contains("attribute.username = bob"))
        #expect(out.contains("store2=0") && out.contains("lookup2=other"))
        #expect(out.contains("replaced=changed"))
        #expect(out.contains("\"svce\"<blob>=\"myservice\"") && out.contains("\"acct\"<blob>=\"bob\""), "\(out)")
        // Made by secret-tool: trusted by secret-tool only (docs/access.md); no one to ask here.
        #expect(out.contains("untrusted=36"))
        #expect(out.contains("add=0") && out.contains("fromapi=from the API"))
        #expect(out.contains("status 0\nhelper=0") && out.contains("attribute.account = swiftapi"), "\(out)")
        #expect(out.contains("clear=0") && out.contains("gone=1"))
    }

    @Test("Python's secretstorage (DH session) and keyring; malformed calls get D-Bus errors and change nothing")
    func pythonClients() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            /usr/bin/python3 - <<'PY'
            import secretstorage, keyring
            from secretstorage.exceptions import SecretServiceNotAvailableException
            conn = secretstorage.dbus_init()
            coll = secretstorage.get_default_collection(conn)
            print("label", coll.get_label(), "locked", coll.is_locked())
            item = coll.create_item("py item", {"service": "pysvc", "username": "carol", "extra": "x"}, b"py secret\\x00\\xff", replace=True)
            print("attributes", sorted(item.get_attributes().items()))
            print("secret", item.get_secret())
            print("found", [i.get_label() for i in coll.search_items({"extra": "x"})])
            print("notfound", [i.get_label() for i in coll.search_items({"extra": "y"})])
            item.set_label("renamed")
            item.set_attributes({"service": "pysvc", "username": "carol", "extra": "z"})
            print("after", item.get_label(), [i.get_label() for i in coll.search_items({"extra": "z"})])
            item.set_secret(b"new secret")
            print("newsecret", item.get_secret())
            count = len(list(coll.get_all_items()))
            try:
                coll.create_item("huge", {"k%d" % n: "v" for n in range(100)}, b"x")
                print("huge accepted")
            except Exception as e:
                print("huge refused", type(e).__name__)
            try:
                coll.create_item("huge secret", {"service": "hugesvc"}, b"x" * (17 * 1024 * 1024))
                print("huge secret accepted")
            except Exception as e:
                print("huge secret refused", type(e).__name__)
            print("unchanged", len(list(coll.get_all_items())) == count)
            item.delete()
            print("deleted", [i.get_label() for i in coll.search_items({"extra": "z"})])
            # Both of keyring's backends: secretstorage's and libsecret's (when PyGObject has it,
            # keyring chains them).
            import keyring.backends.SecretService, keyring.backends.libsecret
            keyring.set_keyring(keyring.backends.SecretService.Keyring())
            keyring.set_password("kr-service", "dave", "kr-secret")
            print("keyring", keyring.get_password("kr-service", "dave"), type(keyring.get_keyring()).__module__)
            keyring.set_keyring(keyring.backends.libsecret.Keyring())
            keyring.set_password("kr-libsecret", "erin", "kr-secret-2")
            print("libsecret", keyring.get_password("kr-libsecret", "erin"), type(keyring.get_keyring()).__module__)
            PY
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \\
                org.freedesktop.Secret.Service.SearchItems string:wrong 2>&1 | head -1
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/nothing \\
                org.freedesktop.Secret.Service.ReadAlias string:default 2>&1 | head -1
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login/00000000000000000000000000000000 \\
                org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Item string:Label 2>&1 | head -1
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \\
                org.freedesktop.Secret.Service.OpenSession string:rot13 variant:string: 2>&1 | head -1
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \\
                org.freedesktop.Secret.Service.ReadAlias string:default 2>&1 | tail -1
            """)
        let out = result.output
        #expect(out.contains("label login locked False"), "\(out)\n\(result.error)")
        #expect(out.contains("attributes [('extra', 'x'), ('service', 'pysvc'), ('username', 'carol')]"))
        #expect(out.contains("secret b'py secret\\x00\\xff'"))
        #expect(out.contains("found ['py item']") && out.contains("notfound []"))
        #expect(out.contains("after renamed ['renamed']"))
        #expect(out.contains("newsecret b'new secret'"))
        #expect(out.contains("huge refused"))
        #expect(out.contains("huge secret refused"), "\(out)")
        #expect(out.contains("unchanged True"))
        #expect(out.contains("deleted []"))
        #expect(out.contains("keyring kr-secret keyring.backends.SecretService"))
        #expect(out.contains("libsecret kr-secret-2 keyring.backends.libsecret"))
        #expect(out.contains("org.freedesktop.DBus.Error.InvalidArgs"))
        #expect(out.contains("org.freedesktop.DBus.Error.UnknownObject"))
        #expect(out.contains("org.freedesktop.Secret.Error.NoSuchObject"))
        #expect(out.contains("org.freedesktop.DBus.Error.NotSupported"))
        #expect(out.contains("object path \"/org/freedesktop/secrets/collection/login\""))
    }

    @Test("A locked collection: its items are listed as locked, Unlock returns a Prompt whose pinentry takes the password; secret-tool search --unlock asks through it too")
    func lockAndUnlock() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            "$KH" set-keychain-password -o '' -p 'keychain pw' >/dev/null 2>&1; echo "password=$?"
            printf 'guarded' | secret-tool store --label guarded service locksvc username frank
            printf 'keychain pw' > "$DIR/pin"
            DISPLAY=:99 /usr/bin/python3 - <<'PY'
            import secretstorage
            conn = secretstorage.dbus_init()
            coll = secretstorage.get_default_collection(conn)
            coll.lock()
            print("locked", coll.is_locked())
            items = list(coll.search_items({"service": "locksvc"}))
            print("lockeditems", len(items), items[0].is_locked())
            dismissed = coll.unlock()
            print("dismissed", dismissed, "locked", coll.is_locked())
            print("secret", items[0].get_secret())
            PY
            /usr/bin/python3 -c 'import secretstorage; c = secretstorage.get_default_collection(secretstorage.dbus_init()); c.lock(); print("relocked", c.is_locked())'
            DISPLAY=:99 secret-tool search --all --unlock service locksvc 2>&1 | grep -E '^secret'
            grep -c 'asks to unlock the keychain' "$DIR/pinentry.log"
            """, pinentry: true)
        let out = result.output
        #expect(out.contains("password=0"), "\(out)\n\(result.error)")
        #expect(out.contains("locked True"))
        #expect(out.contains("lockeditems 1 True"))
        #expect(out.contains("dismissed False locked False"))
        #expect(out.contains("secret b'guarded'"))
        #expect(out.contains("relocked True"), "\(out)")
        #expect(out.contains("secret = guarded"), "\(out)")
        #expect(out.contains("\n2\n") || out.hasSuffix("2\n"))
    }

    @Test("A client that vanishes takes its session and prompt with it; no other client may use them; the provider serves on")
    func vanishingClient() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            "$KH" set-keychain-password -o '' -p 'pw' >/dev/null 2>&1
            "$KH" lock-keychain >/dev/null 2>&1
            /usr/bin/python3 - > "$DIR/first" <<'PY'
            from jeepney import new_method_call, DBusAddress
            from jeepney.io.blocking import open_dbus_connection
            conn = open_dbus_connection(bus="SESSION")
            service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
            _, session = conn.send_and_get_reply(new_method_call(service, "OpenSession", "sv", ("plain", ("s", "")))).body
            _, prompt = conn.send_and_get_reply(new_method_call(service, "Unlock", "ao", (["/org/freedesktop/secrets/collection/login"],))).body
            print(session, prompt)
            PY
            read SESSION PROMPT < "$DIR/first"
            echo "prompt=$PROMPT"
            /usr/bin/python3 - "$SESSION" "$PROMPT" <<'PY'
            import sys
            from jeepney import new_method_call, DBusAddress
            from jeepney.io.blocking import open_dbus_connection
            session, prompt = sys.argv[1], sys.argv[2]
            conn = open_dbus_connection(bus="SESSION")
            def call(path, interface, member, signature="", body=()):
                reply = conn.send_and_get_reply(new_method_call(DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface),
                                                                member, signature, body))
                return reply.header.fields.get(4, "ok")  # 4: the error name
            print("prompt:", call(prompt, "org.freedesktop.Secret.Prompt", "Prompt", "s", ("",)))
            print("dismiss:", call(prompt, "org.freedesktop.Secret.Prompt", "Dismiss"))
            item = "/org/freedesktop/secrets/collection/login/00000000000000000000000000000000"
            print("getsecrets:", call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets", "aoo", ([item], session)))
            print("close:", call(session, "org.freedesktop.Secret.Session", "Close"))
            print("alive:", call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", "s", ("default",)))
            PY
            """)
        let out = result.output
        #expect(out.contains("prompt=/org/freedesktop/secrets/prompt/p"), "\(out)\n\(result.error)")
        #expect(out.contains("prompt: org.freedesktop.Secret.Error.NoSuchObject"))
        #expect(out.contains("dismiss: org.freedesktop.Secret.Error.NoSuchObject"))
        #expect(out.contains("getsecrets: org.freedesktop.Secret.Error.NoSession"))
        #expect(out.contains("close: org.freedesktop.Secret.Error.NoSession"))
        #expect(out.contains("alive: ok"))
    }

    @Test("keyhavend --secret-service refuses politely when gnome-keyring provides the name")
    func nameTaken() throws {
        try #require(toolsPresent() && FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon"),
                     "scripts/bootstrap installs gnome-keyring")
        var runner = try CommandRunner()
        defer { runner.finish() }
        runner.extraEnvironment["KEYHAVEN_AGENT_SOCKET"] = runner.runtime + "/other.sock"
        let folder = try TemporaryFolder.make(prefix: "keyhaven-gk")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = """
            export HOME='\(folder)' XDG_DATA_HOME='\(folder)/data' XDG_RUNTIME_DIR='\(runner.runtime)'
            printf '' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
            for i in $(seq 50); do dbus-send --session --print-reply --dest=org.freedesktop.DBus / \\
                org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.1; done
            '\(CommandRunner.products.path)/keyhavend' --secret-service; echo "status=$?"
            # This bus's gnome-keyring only (another test may run its own meanwhile).
            GK=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '/uint32/ {print $2}')
            [ -n "$GK" ] && kill "$GK"
            """
        try script.write(toFile: folder + "/test.sh", atomically: true, encoding: .utf8)
        let result = try CommandRunner.execute("/usr/bin/dbus-run-session", ["--", "/bin/bash", folder + "/test.sh"],
                                               environment: runner.environment)
        #expect(result.output.contains("status=1"), "\(result.output)\n\(result.error)")
        #expect(result.error.contains("another program already provides org.freedesktop.secrets"))
    }
}
