import Foundation
import KeychainTestSupport
import Testing

/// Where prompts go (docs/access.md, "Where prompts go"): the agent finds the session's display
/// itself, from logind (mocked by root on root's private system bus), the user's service manager
/// (a stand-in on the user's bus, a program only root can change named `systemd`) and its own
/// environment; what the client's memory says only counts when none of them names one. The agent,
/// its client and the pinentry run as an ordinary user; the pinentry says which display it got.
@Suite(.freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct PromptDisplayTests {
    /// Drives the mocks: `logind setup UID` (a session c1 of that user, no graphical one yet),
    /// `logind graphical TYPE DISPLAY` (c1 becomes the user's graphical session),
    /// `manager env NAME=VALUE...` (the service manager's Environment).
    static let mocks = """
        import dbus, sys
        mock = 'org.freedesktop.DBus.Mock'
        if sys.argv[1] == 'logind':
            bus = dbus.SystemBus()
            manager = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1')
            if sys.argv[2] == 'setup':
                uid = int(sys.argv[3])
                # As logind answers: the user's object path (the template's own GetUser adds a number to a string).
                manager.AddMethod('org.freedesktop.login1.Manager', 'GetUser', 'u', 'o', 'ret = "/org/freedesktop/login1/user/%d" % args[0]',
                                  dbus_interface=mock)
                manager.AddSession('c1', 'seat0', dbus.UInt32(uid), 'user%d' % uid, True, dbus_interface=mock)
            else:
                session = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1/session/c1')
                session.UpdateProperties('org.freedesktop.login1.Session', {'Type': sys.argv[3], 'Display': sys.argv[4]}, dbus_interface=mock)
                uid = int(session.Get('org.freedesktop.login1.Session', 'User', dbus_interface='org.freedesktop.DBus.Properties')[0])
                user = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1/user/%d' % uid)
                user.Set('org.freedesktop.login1.User', 'Display',
                         dbus.Struct(('c1', dbus.ObjectPath('/org/freedesktop/login1/session/c1')), signature='so'),
                         dbus_interface='org.freedesktop.DBus.Properties')
        else:
            bus = dbus.SessionBus()
            manager = bus.get_object('org.freedesktop.systemd1', '/org/freedesktop/systemd1')
            value = dbus.Array(sys.argv[3:], signature='s')
            try:
                manager.AddProperty('org.freedesktop.systemd1.Manager', 'Environment', value, dbus_interface=mock)
            except dbus.exceptions.DBusException:
                manager.UpdateProperties('org.freedesktop.systemd1.Manager', {'Environment': value}, dbus_interface=mock)
        """

    /// A pinentry that notes the display it was started with and allows.
    static func pinentry(log: String) -> String {
        """
        #!/bin/sh
        echo "DISPLAY=${DISPLAY-} WAYLAND_DISPLAY=${WAYLAND_DISPLAY-} XAUTHORITY=${XAUTHORITY-}" >> '\(log)'
        echo "OK Pleased to meet you"
        while IFS= read -r line; do
          case "$line" in BYE*) echo OK; exit 0 ;; *) echo OK ;; esac
        done
        """
    }

    /// Runs `body` (bash) as root with the stage's helpers:
    /// - `stage_logind`: root's system bus and a mocked logind on it, the user's session c1 in it;
    /// - `stage_manager`: the user's bus and the service manager's stand-in on it;
    /// - `agent [VAR=VALUE...]`: (re)starts the user's agent with those in its environment;
    /// - `stage`: both of the above, the agent in display :40, and the item the user's program adds;
    /// - `ask [VAR=VALUE...]`: the user's program reads an item that asks for the user at every use,
    ///   with only those in its environment; prints its status and the display the pinentry got.
    static func run(_ body: String) throws -> (output: String, error: String) {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-display")
        chmod(folder, 0o755)
        // Where root alone writes, for the stand-in (a copy of python3 named systemd): /run and
        // each folder above it are root's.
        var template = Array("/run/keyhaven-display.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw CocoaError(.fileWriteUnknown) }
        let rootsFolder = String(cString: made)
        chmod(rootsFolder, 0o755)
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-display"), executables: ["keyhaven", "keyhavend", "keyhaven-test-helper"])
        let user = session.user
        let own = try user.makeFolder(prefix: "keyhaven-display-own")
        defer {
            session.remove()
            for path in [folder, rootsFolder, own] { try? FileManager.default.removeItem(atPath: path) }
        }
        // The interpreter itself: /usr/bin/python3 is a link, which would be copied as one.
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path,
                                         toPath: rootsFolder + "/systemd")
        chmod(rootsFolder + "/systemd", 0o755)
        try mocks.write(toFile: folder + "/mocks.py", atomically: true, encoding: .utf8)
        chmod(folder + "/mocks.py", 0o644)
        try BiometryTests.busConfiguration(socket: folder + "/system_bus").write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        try ExecutableFile.write(pinentry(log: own + "/pinentry.log"), to: own + "/pinentry", mode: 0o755)
        _ = chown(own + "/pinentry", user.uid, user.gid)
        let script = """
            set -u
            DIR='\(folder)'; OWN='\(own)'; USER_UID=\(user.uid); BUS="unix:path=$DIR/system_bus"; USERBUS="unix:path=\(session.runtime)/bus"
            KH='\(session.binaries.path("keyhaven"))'; HELPER='\(session.binaries.path("keyhaven-test-helper"))'; STANDIN='\(rootsFolder)/systemd'
            PIDS=()
            trap 'kill -9 ${PIDS[@]} 2>/dev/null; pkill -9 -u \(user.uid) 2>/dev/null; wait 2>/dev/null' EXIT
            as_user() { /usr/bin/setpriv --reuid=\(user.uid) --regid=\(user.gid) --clear-groups -- /usr/bin/env -i PATH=/usr/bin:/bin \\
                HOME='\(session.home)' KEYHAVEN_HOME='\(session.home)' XDG_RUNTIME_DIR='\(session.runtime)' KEYHAVEN_AGENT=on "$@"; }
            mock() { DBUS_SYSTEM_BUS_ADDRESS="$BUS" /usr/bin/python3 "$DIR/mocks.py" "$@"; }
            user_mock() { as_user DBUS_SESSION_BUS_ADDRESS="$USERBUS" /usr/bin/python3 "$DIR/mocks.py" "$@"; }
            stage_logind() {
                /usr/bin/dbus-daemon --config-file="$DIR/bus.conf" --nofork --nopidfile >/dev/null 2>&1 &
                PIDS+=($!)
                for i in $(seq 100); do [ -S "$DIR/system_bus" ] && break; sleep 0.05; done
                DBUS_SYSTEM_BUS_ADDRESS="$BUS" /usr/bin/python3 -m dbusmock --system --template logind >"$DIR/logind.log" 2>&1 &
                LOGIND=$!; PIDS+=($LOGIND)
                for i in $(seq 100); do mock logind setup \(user.uid) 2>/dev/null && break; sleep 0.1; done
            }
            stage_manager() {
                as_user /usr/bin/dbus-daemon --session --nofork --nopidfile --address="$USERBUS" >/dev/null 2>&1 &
                PIDS+=($!)
                for i in $(seq 100); do [ -S '\(session.runtime)/bus' ] && break; sleep 0.05; done
                start_manager "$STANDIN"
            }
            start_manager() {
                as_user DBUS_SESSION_BUS_ADDRESS="$USERBUS" "$1" -m dbusmock --session org.freedesktop.systemd1 /org/freedesktop/systemd1 \\
                    org.freedesktop.systemd1.Manager >"$DIR/manager.log" 2>&1 &
                MANAGER=$!; PIDS+=($MANAGER)
                for i in $(seq 100); do user_mock manager env 2>/dev/null && break; sleep 0.1; done
            }
            agent() {
                as_user "$KH" agent stop >/dev/null 2>&1
                as_user KEYHAVEN_TEST_SYSTEM_BUS="$BUS" DBUS_SESSION_BUS_ADDRESS="$USERBUS" KEYHAVEN_PINENTRY="$OWN/pinentry" "$@" \\
                    '\(session.binaries.path("keyhavend"))' >> "$DIR/agent.log" 2>&1 &
                PIDS+=($!)
                for i in $(seq 100); do [ -S '\(session.runtime)/keyhaven/agent.sock' ] && break; sleep 0.1; done
            }
            # Both buses, the agent started in display :40, and the item that asks at every use.
            stage() {
                stage_logind
                stage_manager
                agent DISPLAY=:40
                echo "add=$(as_user "$HELPER" item add-presence presence | head -1)"
            }
            ask() {
                rm -f "$OWN/pinentry.log"
                local status; status=$(as_user "$@" "$HELPER" item read presence < /dev/null | head -1)
                echo "$status $(tail -1 "$OWN/pinentry.log" 2>/dev/null || echo 'no prompt')"
            }
            \(body)
            """
        try script.write(toFile: folder + "/test.sh", atomically: true, encoding: .utf8)
        let result = try CommandRunner.execute("/bin/bash", [folder + "/test.sh"], environment: ["PATH": "/usr/bin:/bin"])
        let log = (try? String(contentsOfFile: folder + "/agent.log", encoding: .utf8)) ?? ""
        return (result.output, result.error + "\nagent log:\n" + log)
    }

    @Test("A prompt goes to the session's display: logind's X11 session first, then the user's service manager, then the agent's own; a program with no display, or with its own, is prompted there")
    func sessionDisplayWins() throws {
        try #require(BiometryTests.toolsPresent, "scripts/bootstrap installs dbus-daemon and python3-dbusmock")
        let result = try Self.run("""
            stage
            echo "agent none: $(ask)"
            echo "agent other: $(ask DISPLAY=:5 WAYLAND_DISPLAY=wayland-9)"
            user_mock manager env DISPLAY=:41 WAYLAND_DISPLAY=wayland-7 XAUTHORITY=/run/user/cookie HOME=/ignored
            echo "manager none: $(ask)"
            echo "manager other: $(ask DISPLAY=:5)"
            mock logind graphical x11 :42
            echo "logind none: $(ask)"
            echo "logind other: $(ask DISPLAY=:5 WAYLAND_DISPLAY=wayland-9)"
            # A Wayland session: logind records no socket, the service manager names it.
            mock logind graphical wayland ''
            echo "wayland: $(ask DISPLAY=:5)"
            """)
        let out = result.output
        #expect(out.contains("add=status 0"), "\(out)\n\(result.error)")
        #expect(out.contains("agent none: status 0 DISPLAY=:40 WAYLAND_DISPLAY= XAUTHORITY="), "\(out)\n\(result.error)")
        #expect(out.contains("agent other: status 0 DISPLAY=:40 WAYLAND_DISPLAY= XAUTHORITY="), "\(out)\n\(result.error)")
        #expect(out.contains("manager none: status 0 DISPLAY=:41 WAYLAND_DISPLAY=wayland-7 XAUTHORITY=/run/user/cookie"), "\(out)\n\(result.error)")
        #expect(out.contains("manager other: status 0 DISPLAY=:41 WAYLAND_DISPLAY=wayland-7 XAUTHORITY=/run/user/cookie"), "\(out)\n\(result.error)")
        #expect(out.contains("logind none: status 0 DISPLAY=:42 WAYLAND_DISPLAY= XAUTHORITY=/run/user/cookie"), "\(out)\n\(result.error)")
        #expect(out.contains("logind other: status 0 DISPLAY=:42 WAYLAND_DISPLAY= XAUTHORITY=/run/user/cookie"), "\(out)\n\(result.error)")
        #expect(out.contains("wayland: status 0 DISPLAY=:41 WAYLAND_DISPLAY=wayland-7 XAUTHORITY=/run/user/cookie"), "\(out)\n\(result.error)")
    }

    @Test("Only root's logind and the user's genuine service manager are believed: the user's program holding logind's name, or a service manager that is a copy the user made, moves no prompt; with no display anywhere but the program's own, it is used; with none at all the agent says why and keyhaven prints it")
    func impostorsAndNoDisplay() throws {
        try #require(BiometryTests.toolsPresent, "scripts/bootstrap installs dbus-daemon and python3-dbusmock")
        let result = try Self.run("""
            stage
            user_mock manager env DISPLAY=:41
            mock logind graphical x11 :42
            echo "genuine: $(ask)"
            # logind gone, and the user's own program takes its name on root's bus with its own session.
            kill -9 $LOGIND; sleep 0.2
            as_user DBUS_SYSTEM_BUS_ADDRESS="$BUS" /usr/bin/python3 -m dbusmock --system --template logind >"$DIR/fake-logind.log" 2>&1 &
            PIDS+=($!)
            for i in $(seq 100); do as_user DBUS_SYSTEM_BUS_ADDRESS="$BUS" /usr/bin/python3 "$DIR/mocks.py" logind setup $USER_UID 2>/dev/null && break; sleep 0.1; done
            as_user DBUS_SYSTEM_BUS_ADDRESS="$BUS" /usr/bin/python3 "$DIR/mocks.py" logind graphical x11 :66
            echo "fake logind: $(ask)"
            # The service manager replaced by a copy of python3 the user made (its own file).
            kill -9 $MANAGER; sleep 0.2
            as_user cp /usr/bin/python3 "$OWN/systemd"
            start_manager "$OWN/systemd"
            user_mock manager env DISPLAY=:67
            echo "fake manager: $(ask)"
            # No display known to the agent: the program's own is used.
            agent
            echo "program's own: $(ask DISPLAY=:5)"
            # None at all, and no terminal: refused at once, and said.
            echo "nowhere: $(ask)"
            # keyhaven, trusted by an item it added with -T '' only after the user allows it.
            as_user "$KH" add-generic-password -s untrusted -a a -w x -T '' >/dev/null 2>&1
            echo "keyhaven: $(as_user "$KH" find-generic-password -s untrusted -w 2>&1 < /dev/null | grep -v 'has no password')"
            """)
        let out = result.output
        #expect(out.contains("add=status 0"), "\(out)\n\(result.error)")
        #expect(out.contains("genuine: status 0 DISPLAY=:42"), "\(out)\n\(result.error)")
        #expect(out.contains("fake logind: status 0 DISPLAY=:41"), "the user's program holding logind's name moved the prompt: \(out)\n\(result.error)")
        #expect(out.contains("fake manager: status 0 DISPLAY=:40"), "a copy of a program the user made moved the prompt: \(out)\n\(result.error)")
        #expect(out.contains("program's own: status 0 DISPLAY=:5"), "\(out)\n\(result.error)")
        #expect(out.contains("nowhere: status -25308 no prompt"), "\(out)\n\(result.error)")
        #expect(out.contains("keyhaven: keyhaven: ") && out.contains("no prompt can be shown: the program has no terminal, and the agent found no display of the user's session (see the agent's log)"),
                "\(out)\n\(result.error)")
        let log = result.error
        #expect(log.contains("logind: org.freedesktop.login1 is held by a program of user") && log.contains("not by logind, which runs as root"), "\(log)")
        #expect(log.contains("org.freedesktop.systemd1 is not the user's service manager"), "\(log)")
        #expect(log.contains("it has no terminal, and no display was found ("), "\(log)")
    }
}
