import Foundation
import KeychainTestSupport
import Testing

/// The agent against a bus of the user's other programs' making, and against their stop
/// requests: as the user, against that user's own agent.
extension SameUserAttackTests {
    @Test("The agent provides the Secret Service only on a bus a genuine dbus-daemon serves (not a copy the user made, not one with code preloaded), and stops only for the administrator programs")
    func busAndStop() throws {
        let v = try Victim()
        defer {
            _ = try? Shell.run("/usr/bin/pkill", ["-9", "-u", String(v.session.user.uid), "dbus-daemon"])
            v.finish()
        }
        let folder = try v.userFolder("bus-attack")
        try v.compileLibrary("void keyhaven_test_preloaded(void) {}\n", to: folder + "/preload.so")
        let binaries = v.session.binaries
        let script = """
            set -u
            KH='\(binaries.path("keyhaven"))'; KD='\(binaries.path("keyhavend"))'; DIR='\(folder)'
            PIDS=()
            trap 'kill -9 ${PIDS[@]} 2>/dev/null; wait 2>/dev/null' EXIT
            bus() { PIDS+=($!); for i in $(seq 100); do [ -S "$DIR/$1" ] && return 0; sleep 0.05; done; return 1; }
            # A program of the user asks the agent to stop.
            echo "stop=$('\(binaries.path("keyhaven-test-helper"))' stop "$XDG_RUNTIME_DIR/keyhaven/agent.sock")"
            "$KH" agent status >/dev/null 2>&1 && echo "running=yes"
            # A bus daemon the user copied (it could be any program that speaks D-Bus and names any
            # pid): the running agent is asked to provide the Secret Service there.
            cp /usr/bin/dbus-daemon "$DIR/dbus-daemon"
            "$DIR/dbus-daemon" --session --nofork --nopidfile --address="unix:path=$DIR/copy_bus" >/dev/null 2>&1 &
            bus copy_bus
            DBUS_SESSION_BUS_ADDRESS="unix:path=$DIR/copy_bus" timeout 10 "$KD" --secret-service > "$DIR/copy.log" 2>&1
            echo "copy=$? $(tr '\\n' ' ' < "$DIR/copy.log")"
            # The system's dbus-daemon with the user's code preloaded, and no agent running: the new
            # agent is started on it.
            LD_PRELOAD="$DIR/preload.so" /usr/bin/dbus-daemon --session --nofork --nopidfile --address="unix:path=$DIR/preload_bus" >/dev/null 2>&1 &
            bus preload_bus
            "$KH" agent stop >/dev/null 2>&1
            DBUS_SESSION_BUS_ADDRESS="unix:path=$DIR/preload_bus" timeout 10 "$KD" --secret-service > "$DIR/preload.log" 2>&1
            echo "preload=$? $(tr '\\n' ' ' < "$DIR/preload.log")"
            # The system's dbus-daemon as it is: provided.
            /usr/bin/dbus-daemon --session --nofork --nopidfile --address="unix:path=$DIR/real_bus" >/dev/null 2>&1 &
            bus real_bus
            DBUS_SESSION_BUS_ADDRESS="unix:path=$DIR/real_bus" "$KD" --secret-service > "$DIR/real.log" 2>&1 &
            PIDS+=($!)
            for i in $(seq 100); do grep -q providing "$DIR/real.log" && break; sleep 0.1; done
            grep -q providing "$DIR/real.log" && echo "real=provided"
            "$KH" agent stop
            """
        try script.write(toFile: folder + "/attack.sh", atomically: true, encoding: .utf8)
        let result = try v.run("/bin/bash", [folder + "/attack.sh"])
        let out = result.output
        #expect(out.contains("stop=refused only the keyhaven command and Keychain Access may stop the agent"), "\(out)\n\(result.error)")
        #expect(out.contains("running=yes"), "\(out)")
        let lines = out.split(separator: "\n")
        // Refused with the reason, the running agent for the copy, a new agent for the preloaded one.
        #expect(lines.contains { $0.hasPrefix("copy=1 keyhavend: the session bus is not served by a genuine bus daemon") && $0.contains("not a program only root can change") },
                "\(out)\n\(result.error)")
        #expect(lines.contains { $0.hasPrefix("preload=1 ") && $0.contains("not served by a genuine bus daemon (/usr/bin/dbus-daemon runs with code that is not its own") },
                "\(out)\n\(result.error)")
        #expect(out.contains("real=provided"), "\(out)\n\(result.error)")
        #expect(out.contains("keyhavend stopped"), "the keyhaven command stops the agent: \(out)")
    }
}
