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
import KeyhavenSyncDevice
import KeyhavenDBus
import KeyhavenSecretServiceCore
import KeyhavenSession

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
                            program (gnome-keyring, KeePassXC) provides it. When an agent
                            already runs, it provides it instead (its unlocked keychains stay
                            unlocked) for as long as this process runs, and this one waits
        """)
    exit(0)
}
for argument in arguments where argument != "--secret-service" {
    say("keyhavend: unknown option \(argument) (see --help)", to: 2)
    exit(2)
}
/// The session bus this process would join: `DBUS_SESSION_BUS_ADDRESS`, else the user's bus in
/// `XDG_RUNTIME_DIR` (sd-bus's default); nil when neither is set.
func sessionBusAddress() -> String? {
    if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty { return address }
    guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty else { return nil }
    return "unix:path=\(runtime)/bus"
}

/// `--secret-service` while another keyhavend serves the socket: that agent provides the Secret
/// Service on this process's session bus, for as long as this process runs (its unlocked
/// keychains stay unlocked). This process then only waits: until the agent exits (status 0), or
/// until it is stopped (SIGTERM from systemd), which closes the connection and so makes the agent
/// give the name up.
///
/// The agent must read which program asks (`/proc/PID/exe`), which it cannot do for a process
/// of the same user that made itself undumpable: a process that hands over holds no key and no
/// password, so it hands over dumpable (before the hardening, or undoing it).
func handOver(_ client: AgentClient) -> Never {
    do throws(StoreError) {
        guard let address = sessionBusAddress() else {
            throw StoreError(.notAvailable, "no session bus: DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset")
        }
        let response = try client.send(.provideSecretService(busAddress: address))
        if let error = response.error { throw error }
        say("keyhavend: the running agent (pid \(response.pid ?? 0)) provides \(SecretServiceNames.busName) on the session bus "
            + "for as long as this process runs")
        let fd = client.detach()
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
        say("keyhavend: the agent has exited; \(SecretServiceNames.busName) is no longer provided")
        exit(0)
    } catch {
        say("keyhavend: \(error.message)", to: 2)
        exit(1)
    }
}

/// A connection to the agent that already serves this home's socket, if one does.
func runningAgent() -> AgentClient? {
    guard let home = try? KeychainHome.current() else { return nil }
    return try? AgentClient(socket: AgentSocket.current(), home: home.path)
}

if arguments.contains("--secret-service"), let client = runningAgent() { handOver(client) }

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
    service.secretService.install { (address) throws(StoreError) in
        let secrets = SecretService(agent: service, connection: try BusConnection(address: address))
        try secrets.start()
        say("keyhavend: providing \(SecretServiceNames.busName) on the session bus")
        DispatchQueue(label: "keyhaven.bus").async { secrets.serve() }
        return {
            secrets.stop()
            say("keyhavend: no longer providing \(SecretServiceNames.busName): the process that asked for it has gone")
        }
    }
    let server: AgentServer
    do throws(StoreError) {
        server = try AgentServer(socket: AgentSocket.current(), service: service)
    } catch where error.reason == .agentRunning && arguments.contains("--secret-service") {
        // An agent started since the check above: nothing secret is in this process yet.
        ProcessHardening.allowInspection()
        guard let client = runningAgent() else {
            say("keyhavend: \(error.message)", to: 2)
            exit(1)
        }
        handOver(client)
    }
    say("keyhavend: listening on \(server.socket.path)")
    if arguments.contains("--secret-service") { try service.secretService.provide(busAddress: nil, owner: nil) }

    // The keychains follow the session: the screen's lock and sleep lock those that ask for it.
    let policy = SessionLockPolicy(registry: registry)
    let session = LogindWatch(onEvent: { event in
        if let line = policy.apply(event) { say("keyhavend: \(line)", to: 2) }
    }, log: { say("keyhavend: \($0)", to: 2) })
    session.start()

    let syncing = Task.detached { await sync.run() }
    server.run()
    syncing.cancel()
    // A TPM without a resource manager keeps what the agent loaded until it is flushed.
    service.tpm.close()
} catch {
    // Everything above throws StoreError only.
    say("keyhavend: \(error.message)", to: 2)
    exit(1)
}
