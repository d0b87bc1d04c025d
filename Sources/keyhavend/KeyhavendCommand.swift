import ArgumentParser
import KeychainModel

/// `keyhavend`: the per-user agent that keeps keychains unlocked between commands. Usually
/// started by `keyhaven` on first need, by systemd's user units or by D-Bus activation;
/// `keyhaven agent start|stop|status` manage it. The work is ``AgentProcess``'s.
@main
struct KeyhavendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyhavend",
        abstract: "The Keyhaven agent: keeps the user's unlocked keychains unlocked for their programs.",
        discussion: """
            Serves the keychains of $KEYHAVEN_HOME (else $XDG_DATA_HOME/keyhaven, else \
            ~/.local/share/keyhaven) on $KEYHAVEN_AGENT_SOCKET (else $XDG_RUNTIME_DIR/keyhaven/agent.sock), \
            in the foreground, until SIGTERM or `keyhaven agent stop`. Unlocked keychains stay unlocked \
            until locked, auto-locked, or this process exits. One agent serves each user: a second \
            one exits with a message naming the first.
            """,
        version: KeyhavenRelease.version
    )

    @Flag(name: .customLong("secret-service"), help: ArgumentHelp("""
        Also provide org.freedesktop.secrets (the Secret Service) on the session bus \
        ($DBUS_SESSION_BUS_ADDRESS); refused when another program (gnome-keyring, KeePassXC) \
        provides it. When an agent already runs, it provides it instead (its unlocked keychains \
        stay unlocked) for as long as this process runs, and this one waits.
        """))
    var secretService = false

    func run() throws {
        AgentProcess(providesSecretService: secretService).run()
    }
}
