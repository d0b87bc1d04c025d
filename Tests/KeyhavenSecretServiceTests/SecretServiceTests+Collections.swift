import Foundation
import KeychainTestSupport
import Testing

/// Collections as the spec has them: a collection's `Label` is read-write.
extension SecretServiceTests {
    @Test("A collection's Label is read-write: set by secretstorage, announced by PropertiesChanged and CollectionChanged, kept across agent restarts, shown by list-keychains; the file keeps its name, and an empty Label gives the file's name back")
    func collectionLabel() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            printf 'kept' | secret-tool store --label kept service labelsvc username gina
            /usr/bin/python3 - <<'PY'
            import secretstorage
            from jeepney.bus_messages import message_bus, MatchRule
            from jeepney.io.blocking import open_dbus_connection
            conn = secretstorage.dbus_init()
            coll = secretstorage.get_default_collection(conn)
            print("before", coll.get_label())
            watcher = open_dbus_connection(bus="SESSION")
            rule = MatchRule(type="signal", path_namespace="/org/freedesktop/secrets")
            watcher.send_and_get_reply(message_bus.AddMatch(rule))
            with watcher.filter(rule) as queue:
                coll.set_label("Personal secrets")
                print("after", coll.get_label())
                seen = []
                try:
                    while len(seen) < 2:
                        message = watcher.recv_until_filtered(queue, timeout=3)
                        seen.append("%s %s %s" % (message.header.fields[8] if 8 in message.header.fields else "",
                                                  message.header.fields[3], message.body))
                except TimeoutError:
                    pass
                for line in seen: print("signal", line)
            try:
                coll.set_label("bad\\nlabel")
            except Exception as error:
                print("control", type(error).__name__)
            PY
            "$KH" list-keychains
            "$KH" agent stop >/dev/null 2>&1 || kill $AGENT
            wait $AGENT 2>/dev/null
            "$(dirname "$KH")/keyhavend" --secret-service > "$DIR/agent2.log" 2>&1 &
            AGENT=$!
            for i in $(seq 100); do grep -q providing "$DIR/agent2.log" 2>/dev/null && break; sleep 0.1; done
            /usr/bin/python3 - 2>&1 <<'PY'
            import secretstorage
            conn = secretstorage.dbus_init()
            coll = secretstorage.get_default_collection(conn)
            print("restarted", coll.get_label(), [i.get_label() for i in coll.search_items({"service": "labelsvc"})])
            coll.set_label("")
            print("reset", coll.get_label())
            PY
            ls "$KEYHAVEN_HOME" | grep keychain-db
            cat "$DIR/agent2.log"
            """)
        let out = result.output
        #expect(out.contains("before login\n"), "\(out)\n\(result.error)")
        #expect(out.contains("after Personal secrets\n"))
        #expect(out.contains("signal sa{sv}as PropertiesChanged ('org.freedesktop.Secret.Collection', {'Label': ('s', 'Personal secrets')}, [])"),
                "\(out)")
        #expect(out.contains("signal o CollectionChanged ('/org/freedesktop/secrets/collection/login',)"), "\(out)")
        #expect(out.contains("control DBusErrorResponse"), "\(out)")
        #expect(out.contains("login.keychain-db\" (Personal secrets)\n"), "\(out)")
        #expect(out.contains("restarted Personal secrets ['kept']\n"), "\(out)")
        #expect(out.contains("reset login\n"), "\(out)")
        #expect(out.contains("\nlogin.keychain-db\n") && !out.contains("Personal secrets.keychain-db"), "\(out)")
    }
}

extension SecretServiceTests {
    @Test("The session collection: listed, always unlocked, reached by ReadAlias and CreateCollection's alias, used by libsecret's SECRET_COLLECTION_SESSION; its items are in memory only, guarded like any item, gone when the agent stops")
    func sessionCollection() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            /usr/bin/python3 - <<'PY'
            import secretstorage
            conn = secretstorage.dbus_init()
            print("collections", " ".join(c.collection_path for c in secretstorage.get_all_collections(conn)))
            coll = secretstorage.get_collection_by_alias(conn, "session")
            print("alias", coll.collection_path, "locked", coll.is_locked(), "label", coll.get_label())
            again = secretstorage.create_collection(conn, "ignored", alias="session")
            print("create", again.collection_path)
            item = coll.create_item("in memory", {"service": "memsvc", "username": "ivy"}, b"MEMORY-ONLY-SECRET-1234")
            print("item", item.item_path, item.get_secret())
            print("found", [i.get_label() for i in secretstorage.search_items(conn, {"service": "memsvc"})])
            try:
                coll.delete()
            except Exception as error:
                print("delete", type(error).__name__)
            PY
            dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \\
                org.freedesktop.Secret.Service.ReadAlias string:session 2>&1 | tail -1
            /usr/bin/python3 - <<'PY'
            import gi
            gi.require_version("Secret", "1")
            from gi.repository import Secret
            schema = Secret.Schema.new("org.example.Keyhaven", Secret.SchemaFlags.NONE, {"user": Secret.SchemaAttributeType.STRING})
            print("libsecret-session", Secret.password_store_sync(schema, {"user": "jay"}, Secret.COLLECTION_SESSION, "session pw",
                                                                   "LIBSECRET-SESSION-5678", None))
            print("libsecret-default", Secret.password_store_sync(schema, {"user": "kim"}, Secret.COLLECTION_DEFAULT, "default pw",
                                                                   "on disk", None))
            print("lookup", Secret.password_lookup_sync(schema, {"user": "jay"}, None), Secret.password_lookup_sync(schema, {"user": "kim"}, None))
            service = Secret.Service.get_sync(Secret.ServiceFlags.LOAD_COLLECTIONS, None)
            session = Secret.Collection.for_alias_sync(service, Secret.COLLECTION_SESSION, Secret.CollectionFlags.LOAD_ITEMS, None)
            print("libsecret-alias", session.get_object_path(), sorted(i.get_label() for i in session.get_items()))
            PY
            # Per-application access holds: secret-tool did not make these items.
            secret-tool lookup service memsvc username ivy >/dev/null 2>&1; echo "othertool=$?"
            ls -A "$KEYHAVEN_HOME"
            grep -rl -e MEMORY-ONLY-SECRET -e LIBSECRET-SESSION "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR" 2>/dev/null; echo "grep=$?"
            restart_agent
            /usr/bin/python3 - <<'PY'
            import secretstorage
            conn = secretstorage.dbus_init()
            coll = secretstorage.get_collection_by_alias(conn, "session")
            print("restarted", len(list(coll.get_all_items())), [i.get_label() for i in secretstorage.search_items(conn, {"user": "kim"})])
            PY
            """)
        let out = result.output
        let session = "/org/freedesktop/secrets/collection/session"
        #expect(out.contains("collections /org/freedesktop/secrets/collection/login \(session)"), "\(out)\n\(result.error)")
        #expect(out.contains("alias \(session) locked False label session"))
        #expect(out.contains("create \(session)"))
        #expect(out.contains("item \(session)/") && out.contains("b'MEMORY-ONLY-SECRET-1234'"))
        #expect(out.contains("found ['in memory']"))
        #expect(out.contains("delete"))
        #expect(out.contains("object path \"\(session)\""))
        #expect(out.contains("libsecret-session True") && out.contains("libsecret-default True"))
        #expect(out.contains("lookup LIBSECRET-SESSION-5678 on disk"))
        #expect(out.contains("libsecret-alias \(session) ['in memory', 'session pw']"))
        #expect(out.contains("othertool=1"))
        #expect(!out.contains("session-keychain") && out.contains("grep=1"), "\(out)")
        #expect(out.contains("restarted 0 ['default pw']"))
    }
}
