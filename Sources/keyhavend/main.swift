// keyhavend: the per-user agent that keeps keychains unlocked between commands.
// Usually started by `keyhaven` on first need; `keyhaven agent start|stop|status` manage it.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenSecretService
import KeyhavenSyncEngine

/// Writes a line to a file descriptor, unbuffered.
func say(_ line: String, to fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
        usage: keyhavend [--secret-service]
        Serves the keychains of $KEYHAVEN_HOME (else $XDG_DATA_HOME/keyhaven, else ~/.local/share/keyhaven)
        on $KEYHAVEN_AGENT_SOCKET (else $XDG_RUNTIME_DIR/keyhaven/agent.sock), in the foreground,
        until SIGTERM or `keyhaven agent stop`. Unlocked keychains stay unlocked until locked,
        auto-locked, or this process exits.
          --secret-service  also provide org.freedesktop.secrets (the Secret Service) on the
                            session bus ($DBUS_SESSION_BUS_ADDRESS); refused when another
                            program (gnome-keyring, KeePassXC) provides it
        """)
    exit(0)
}
for argument in arguments where argument != "--secret-service" {
    say("keyhavend: unknown option \(argument) (see --help)", to: 2)
    exit(2)
}
do {
    // Before any key or password is in this process.
    ProcessHardening.restartWithoutThreadCache()
    try ProcessHardening.apply()
    let home = try KeychainHome.current()
    let registry = KeychainRegistry()
    // The background sync works on the agent's own open keychains: an unlock counts for it too.
    let sync = SyncLoop(home: home, keychain: { () throws(StoreError) in try registry.defaultKeychain() },
                        report: { say("keyhavend: \($0)", to: 2) })
    let service = AgentService(home: home, registry: registry, onChange: { sync.poke() })
    let server = try AgentServer(socket: AgentSocket.current(), service: service)
    say("keyhavend: listening on \(server.socket.path)")
    if arguments.contains("--secret-service") {
        let secrets = SecretService(agent: service, connection: try BusConnection())
        try secrets.start()
        say("keyhavend: providing \(SecretService.busName) on the session bus")
        DispatchQueue(label: "keyhaven.bus").async { secrets.serve() }
    }

    let syncing = Task.detached { await sync.run() }
    server.run()
    syncing.cancel()
} catch {
    // Everything above throws StoreError only.
    let hint = arguments.contains("--secret-service") && error.message.hasPrefix("another keyhavend")
        ? " (without the Secret Service, perhaps: stop it with `keyhaven agent stop`, then start this one)" : ""
    say("keyhavend: \(error.message)\(hint)", to: 2)
    exit(1)
}
