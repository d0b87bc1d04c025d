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
            until locked, auto-locked, or this process exits. It decides which program may use which \
            item (docs/access.md) and asks the user through pinentry. One agent serves each user: a \
            second one exits with a message naming the first.

            keyhaven starts it on first need; the systemd user units keyhavend.service and \
            keyhaven-secret-service.service run it under systemd instead, and D-Bus activation \
            (PREFIX/share/dbus-1/services/org.freedesktop.secrets.service) starts it with \
            --secret-service when a program first asks for the Secret Service.

            Environment (docs/environment.md has every variable): KEYHAVEN_PINENTRY, the program that \
            asks (default pinentry on the PATH); KEYHAVEN_PROMPT_TIMEOUT, the seconds a prompt waits \
            (default 60); KEYHAVEN_TPM, the TPM's TCTI (default device:/dev/tpmrm0); \
            KEYHAVEN_AGENT_LOOKUP_TURNS, how many look-ups of one item run at once (default: the CPUs); \
            KEYHAVEN_AGENT_SPIN_US, the microseconds a connection's thread polls its socket after an \
            answer before it sleeps (default 200, 0 never); KEYHAVEN_SYNC_LONG_POLL_SECONDS, how long \
            each long poll of the sync server waits (1 to 25, default 25). Prompts are drawn on the \
            display logind or the user's service manager names for the session, else on $DISPLAY or \
            $WAYLAND_DISPLAY (with $XAUTHORITY); a prompt that cannot be shown is said on standard \
            error with the program and the reason.

            Exit status: 0 after SIGTERM or `keyhaven agent stop`, or, having handed the Secret \
            Service to a running agent, when that agent exits; 1 when it cannot start (another agent \
            on the socket without --secret-service, the bus name taken, no session bus); 64 for an \
            unknown option.
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
