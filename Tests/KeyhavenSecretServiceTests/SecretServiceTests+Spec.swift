import Foundation
import KeychainTestSupport
import Testing

/// Every method and property of the spec's Service, Collection, Item, Session and Prompt, called
/// over the bus with the arguments the spec names, and the spec's error names where it fails
/// (docs/secret-service.md, "The specification, method by method").
extension SecretServiceTests {
    @Test("Every method and property of the five interfaces: the happy path, the arguments the spec names, and its error names (NoSuchObject, IsLocked, NoSession)")
    func everyMethod() throws {
        try #require(toolsPresent(), "scripts/bootstrap installs dbus, libsecret-tools and python3-secretstorage")
        let result = try session("""
            "$KH" create-keychain -p 'locked pw' shut >/dev/null 2>&1
            "$KH" lock-keychain shut >/dev/null 2>&1
            /usr/bin/python3 - <<'PY'
            from jeepney import new_method_call, DBusAddress, MatchRule
            from jeepney.bus_messages import message_bus
            from jeepney.io.blocking import open_dbus_connection
            conn = open_dbus_connection(bus="SESSION")
            ROOT = "/org/freedesktop/secrets"
            S, C, I = "org.freedesktop.Secret.Service", "org.freedesktop.Secret.Collection", "org.freedesktop.Secret.Item"
            P = "org.freedesktop.DBus.Properties"
            def call(path, interface, member, signature="", body=()):
                reply = conn.send_and_get_reply(new_method_call(DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface),
                                                                member, signature, body))
                error = reply.header.fields.get(4)
                return ("error", error) if error else reply.body
            def show(name, *values): print(name + ":", *values)
            def props(path, interface): return call(path, P, "GetAll", "s", (interface,))
            def secret(session, data, ctype="text/plain"): return (session, b"", data, ctype)

            # Service
            _, session = call(ROOT, S, "OpenSession", "sv", ("plain", ("s", "")))
            show("OpenSession", session.startswith(ROOT + "/session/s"))
            show("OpenSession.dh-bad-key", call(ROOT, S, "OpenSession", "sv", ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("ay", b"\\x01")))[1])
            show("OpenSession.unknown", call(ROOT, S, "OpenSession", "sv", ("rot13", ("s", "")))[1])
            work, prompt = call(ROOT, S, "CreateCollection", "a{sv}s", ({"org.freedesktop.Secret.Collection.Label": ("s", "work")}, ""))
            show("CreateCollection", (work, prompt))
            show("CreateCollection.alias-session", call(ROOT, S, "CreateCollection", "a{sv}s", ({}, "session")))
            show("CreateCollection.alias-unknown", call(ROOT, S, "CreateCollection", "a{sv}s", ({}, "bogus"))[1])
            show("ReadAlias", [call(ROOT, S, "ReadAlias", "s", (a,))[0] for a in ("default", "login", "session", "nothing")])
            show("SetAlias.same", call(ROOT, S, "SetAlias", "so", ("default", ROOT + "/collection/login")))
            show("SetAlias.other", call(ROOT, S, "SetAlias", "so", ("default", work))[1])
            show("Service.Collections", props(ROOT, S)[0]["Collections"][1])

            # Collection
            attributes = {"spec": "yes", "user": "lee"}
            def create(label, data, replace, extra={}):
                properties = {I + ".Label": ("s", label), I + ".Attributes": ("a{ss}", attributes)}
                properties.update(extra)
                return call(work, C, "CreateItem", "a{sv}(oayays)b", (properties, secret(session, data), replace))
            first, p1 = create("first", b"one", False, {I + ".Type": ("s", "org.example.Spec"), I + ".Locked": ("b", True),
                                                          I + ".Created": ("t", 1), I + ".Modified": ("t", 1)})
            second, _ = create("second", b"two", False)
            show("CreateItem", (first != second, p1))
            third, _ = create("third", b"three", True)
            show("CreateItem.replace", third in (first, second))
            show("CreateItem.no-session", call(work, C, "CreateItem", "a{sv}(oayays)b", ({}, secret(ROOT + "/session/s999", b"x"), False))[1])
            show("CreateItem.bad-label", call(work, C, "CreateItem", "a{sv}(oayays)b", ({I + ".Label": ("u", 7)}, secret(session, b"x"), False))[1])
            found = call(work, C, "SearchItems", "a{ss}", ({"spec": "yes"},))[0]
            show("Collection.SearchItems", sorted(found) == sorted([first, second]))
            show("Service.SearchItems", sorted(call(ROOT, S, "SearchItems", "a{ss}", ({"spec": "yes"},))[0]) == sorted([first, second]))
            collection = props(work, C)[0]
            show("Collection.props", sorted(collection), collection["Label"][1], collection["Locked"][1], collection["Created"][1] > 0)
            call(work, P, "Set", "ssv", (C, "Label", ("s", "Work secrets")))
            show("Collection.Label.set", props(work, C)[0]["Label"][1])

            # Item
            item = props(first, I)[0]
            show("Item.props", sorted(item), item["Label"][1], item["Type"][1], item["Locked"][1], item["Created"][1] > 1,
                 sorted(item["Attributes"][1].items()))
            call(first, P, "Set", "ssv", (I, "Label", ("s", "renamed")))
            call(first, P, "Set", "ssv", (I, "Attributes", ("a{ss}", {"spec": "yes", "user": "lee", "more": "1"})))
            item = props(first, I)[0]
            show("Item.set", item["Label"][1], sorted(item["Attributes"][1]))
            show("Item.Created.set", call(first, P, "Set", "ssv", (I, "Created", ("t", 5)))[1])
            show("GetSecret", call(first, I, "GetSecret", "o", (session,))[0][2])
            show("GetSecret.no-session", call(first, I, "GetSecret", "o", (ROOT + "/session/s999",))[1])
            call(first, I, "SetSecret", "(oayays)", (secret(session, b"changed", "application/octet-stream"),))
            show("SetSecret", call(first, I, "GetSecret", "o", (session,))[0][2:])
            secrets = call(ROOT, S, "GetSecrets", "aoo", ([first, second], session))[0]
            show("GetSecrets", sorted(v[2] for v in secrets.values()))
            show("Item.Delete", call(second, I, "Delete"))
            show("Item.gone", call(second, I, "GetSecret", "o", (session,))[1], props(second, I)[1])

            # Locked collection and its errors
            shut = ROOT + "/collection/shut"
            show("Lock", call(ROOT, S, "Lock", "ao", ([work],)))
            show("shut.Locked", props(shut, C)[0]["Locked"][1])
            show("CreateItem.locked", call(shut, C, "CreateItem", "a{sv}(oayays)b", ({}, secret(session, b"x"), False))[1])
            unlocked, prompt = call(ROOT, S, "Unlock", "ao", ([shut, work],))
            show("Unlock", unlocked, prompt.startswith(ROOT + "/prompt/p"))
            rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", path=prompt)
            conn.send_and_get_reply(message_bus.AddMatch(rule))
            with conn.filter(rule) as queue:
                show("Prompt.Dismiss", call(prompt, "org.freedesktop.Secret.Prompt", "Dismiss"))
                show("Completed", conn.recv_until_filtered(queue, timeout=5).body)
            show("Prompt.gone", call(prompt, "org.freedesktop.Secret.Prompt", "Prompt", "s", ("",))[1])

            # Every node a parent lists answers Introspect (busctl tree, d-spy)
            import re
            def children(path):
                xml = call(path, "org.freedesktop.DBus.Introspectable", "Introspect")[0]
                return re.findall(r'<node name="([^"]+)"/>', xml)
            show("Introspect.tree", children(ROOT), children(ROOT + "/collection"), children(ROOT + "/aliases"))

            # Missing objects, sessions; deleting a collection
            show("NoSuchObject", [call(p, P, "GetAll", "s", (C,))[1] for p in (ROOT + "/collection/nothere", ROOT + "/aliases/nothing")])
            show("Collection.Delete", call(work, C, "Delete"))
            show("Collection.gone", call(work, C, "SearchItems", "a{ss}", ({},))[1])
            show("Session.Close", call(session, "org.freedesktop.Secret.Session", "Close"))
            show("Session.gone", call(ROOT, S, "GetSecrets", "aoo", ([], session))[1], call(session, "org.freedesktop.Secret.Session", "Close")[1])
            PY
            """)
        let out = result.output
        let root = "/org/freedesktop/secrets"
        var lines: [String: String] = [:]
        for line in out.components(separatedBy: "\n") {
            guard let range = line.range(of: ": ") else { continue }
            let name = String(line[..<range.lowerBound])
            if lines[name] == nil { lines[name] = String(line[range.upperBound...]) }
        }
        let expected: [String: String] = [
            "OpenSession": "True",
            "OpenSession.dh-bad-key": "org.freedesktop.DBus.Error.InvalidArgs",
            "OpenSession.unknown": "org.freedesktop.DBus.Error.NotSupported",
            "CreateCollection": "('\(root)/collection/work', '/')",
            "CreateCollection.alias-session": "('\(root)/collection/session', '/')",
            "CreateCollection.alias-unknown": "org.freedesktop.DBus.Error.NotSupported",
            "ReadAlias": "['\(root)/collection/login', '\(root)/collection/login', '\(root)/collection/session', '/']",
            "SetAlias.same": "()",
            "SetAlias.other": "org.freedesktop.DBus.Error.NotSupported",
            "Service.Collections": "['\(root)/collection/login', '\(root)/collection/shut', '\(root)/collection/work', '\(root)/collection/session']",
            "CreateItem": "(True, '/')",
            "CreateItem.replace": "True",
            "CreateItem.no-session": "org.freedesktop.Secret.Error.NoSession",
            "CreateItem.bad-label": "org.freedesktop.DBus.Error.InvalidArgs",
            "Collection.SearchItems": "True",
            "Service.SearchItems": "True",
            "Collection.props": "['Created', 'Items', 'Label', 'Locked', 'Modified'] work False True",
            "Collection.Label.set": "Work secrets",
            "Item.props": "['Attributes', 'Created', 'Label', 'Locked', 'Modified', 'Type'] first org.example.Spec False True "
                + "[('spec', 'yes'), ('user', 'lee'), ('xdg:schema', 'org.example.Spec')]",
            "Item.set": "renamed ['more', 'spec', 'user']",
            "Item.Created.set": "org.freedesktop.DBus.Error.PropertyReadOnly",
            "GetSecret": "b'one'",
            "GetSecret.no-session": "org.freedesktop.Secret.Error.NoSession",
            "SetSecret": "(b'changed', 'application/octet-stream')",
            // `first` took the schema as an attribute, so `replace` replaced `second`.
            "GetSecrets": "[b'changed', b'three']",
            "Item.Delete": "('/',)",
            "Item.gone": "org.freedesktop.Secret.Error.NoSuchObject org.freedesktop.Secret.Error.NoSuchObject",
            "Lock": "([], '/')",
            "shut.Locked": "True",
            "CreateItem.locked": "org.freedesktop.Secret.Error.IsLocked",
            "Unlock": "['\(root)/collection/work'] True",
            "Prompt.Dismiss": "()",
            "Completed": "(True, ('ao', []))",
            "Prompt.gone": "org.freedesktop.Secret.Error.NoSuchObject",
            "NoSuchObject": "['org.freedesktop.Secret.Error.NoSuchObject', 'org.freedesktop.Secret.Error.NoSuchObject']",
            "Collection.Delete": "('/',)",
            "Collection.gone": "org.freedesktop.Secret.Error.NoSuchObject",
            "Introspect.tree": "['collection', 'aliases'] ['login', 'shut', 'work', 'session'] ['default', 'login', 'session']",
            "Session.Close": "()",
            "Session.gone": "org.freedesktop.Secret.Error.NoSession org.freedesktop.Secret.Error.NoSession",
        ]
        for (name, value) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(lines[name] == value, "\(name)\n\(out)\n\(result.error)")
        }
    }
}
