import Foundation
import KeychainTestSupport
import Testing

/// Seahorse (GNOME's Passwords and Keys) on Keyhaven's Secret Service, under Xvfb, driven through
/// AT-SPI by seahorse.py, as the user it runs as.
extension SecretServiceTests {
    static let seahorseTools = ["/usr/bin/seahorse", "/usr/bin/Xvfb", "/usr/libexec/at-spi-bus-launcher", "/usr/bin/import"]

    @Test("Seahorse lists the login collection, unlocks it through Keyhaven's prompt, shows its item with its attributes, and its secret (masked) once the user allows Seahorse")
    func seahorse() throws {
        try #require(toolsPresent() && Self.seahorseTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                     "scripts/bootstrap installs seahorse, xvfb, at-spi2-core, python3-pyatspi and imagemagick")
        let driver = try String(contentsOfFile: SourceTree.root + "/Tests/KeyhavenSecretServiceTests/seahorse.py", encoding: .utf8)
        let result = try session("""
            printf 'seahorse-secret' | secret-tool store --label 'Seahorse item' service shsvc username amy
            "$KH" set-keychain-password -o '' -p 'sea pw' >/dev/null 2>&1; "$KH" lock-keychain >/dev/null 2>&1
            printf 'sea pw' > "$DIR/pin"
            cat > "$DIR/seahorse.py" <<'PY'
            \(driver)
            PY
            cat > "$DIR/gui.sh" <<'GUI'
            exec 3>"$DIR/display"
            /usr/bin/Xvfb -displayfd 3 -screen 0 1100x700x24 -nolisten tcp >/dev/null 2>&1 &
            for i in $(seq 100); do [ -s "$DIR/display" ] && break; sleep 0.05; done
            exec 3>&-
            export DISPLAY=":$(cat "$DIR/display")" GDK_BACKEND=x11 HOME="$DIR"
            /usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &
            /usr/bin/seahorse > "$DIR/seahorse.log" 2>&1 &
            SECRET=seahorse-secret SHOTS="$DIR" /usr/bin/python3 "$DIR/seahorse.py"; echo "driver=$?"
            GUI
            # A session of its own, killed whole: the accessibility bus outlives its launcher otherwise.
            export DIR
            setsid -w /bin/bash -c '/bin/bash "$DIR/gui.sh" > "$DIR/gui.out" 2>&1 < /dev/null; pkill -9 -s $$'
            cat "$DIR/gui.out" | grep -E '^(driver=|FAILED|[a-z]+ (listed|shown|loaded))'
            echo "unlock-asked=$(grep -c 'asks to unlock the keychain' "$DIR/pinentry.log")"
            echo "use-asked=$(grep -c '"seahorse" (/usr/bin/seahorse) wants to use "Seahorse item"' "$DIR/pinentry.log")"
            """, pinentry: true)
        let out = result.output
        #expect(out.contains("driver=0"), "\(out)\n\(result.error)")
        for step in ["collection listed", "item listed after unlocking", "properties shown", "attributes shown", "secret loaded"] {
            #expect(out.contains(step + "\n"), "\(step)")
        }
        // Per-application access as for any program: Seahorse did not make the item, so it was asked about.
        #expect(out.contains("unlock-asked=1") && out.contains("use-asked=1"), "\(out)")
    }
}
