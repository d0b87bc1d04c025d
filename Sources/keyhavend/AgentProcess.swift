#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenAgentClient
import KeyhavenDBus
import KeyhavenSecretService
import KeyhavenSecretServiceCore
import KeyhavenSession
import KeyhavenSyncDevice

/// The agent's process, wired: the hardening before any secret is in it, the socket's server,
/// the Secret Service (its own, or handed to an agent already running), the session's lock
/// followed in logind, and the background sync.
struct AgentProcess {
    /// `--secret-service`.
    let providesSecretService: Bool

    /// Serves until stopped; exits the process.
    func run() -> Never {
        if providesSecretService, let client = Self.runningAgent() { Self.handOver(client) }
        do throws(StoreError) {
            try serve()
            exit(0)
        } catch {
            Self.say("keyhavend: \(error.message)", to: 2)
            exit(1)
        }
    }

    private func serve() throws(StoreError) {
        // Before any key or password is in this process.
        ProcessHardening.restartWithoutThreadCache()
        try ProcessHardening.apply()
        let home = try KeychainHome.current()
        let registry = KeychainRegistry()
        // The background sync works on the agent's own open keychains: an unlock counts for it too.
        let sync = SyncLoop(home: home, keychain: { () throws(StoreError) in try registry.defaultKeychain() },
                            report: { Self.say("keyhavend: \($0)", to: 2) })
        let service = AgentService(home: home, registry: registry, onChange: { sync.poke() })
        service.sync.install(SyncHost.Work(round: { () async throws(StoreError) -> SyncRoundSummary in
            do throws(SyncEngineError) { return SyncRoundSummary(try await sync.roundNow()) } catch { throw error.storeError }
        }, status: { (staleAfter) throws(StoreError) -> SyncStatusSummary? in
            do throws(SyncEngineError) { return try sync.status(staleAfter: staleAfter).map(SyncStatusSummary.init) } catch { throw error.storeError }
        }, devices: { () throws(StoreError) -> [SyncDeviceSummary] in
            do throws(SyncEngineError) { return try sync.devices().map(SyncDeviceSummary.init) } catch { throw error.storeError }
        }))
        service.secretService.install { (address) throws(StoreError) in
            let secrets = SecretService(agent: service, connection: try BusConnection(address: address))
            try secrets.start()
            Self.say("keyhavend: providing \(SecretServiceNames.busName) on the session bus")
            DispatchQueue(label: "keyhaven.bus").async { secrets.serve() }
            return {
                secrets.stop()
                Self.say("keyhavend: no longer providing \(SecretServiceNames.busName): the process that asked for it has gone")
            }
        }
        let server: AgentServer
        do throws(StoreError) {
            server = try AgentServer(socket: AgentSocket.current(), service: service)
        } catch where error.reason == .agentRunning && providesSecretService {
            // An agent started since the check in run(): nothing secret is in this process yet.
            ProcessHardening.allowInspection()
            guard let client = Self.runningAgent() else { throw error }
            Self.handOver(client)
        }
        Self.say("keyhavend: listening on \(server.socket.path)")
        if providesSecretService { try service.secretService.provide(busAddress: nil, owner: nil) }

        // The keychains follow the session: the screen's lock and sleep lock those that ask for it.
        let policy = SessionLockPolicy(registry: registry)
        let session = LogindWatch(onEvent: { event in
            if let line = policy.apply(event) { Self.say("keyhavend: \(line)", to: 2) }
        }, log: { Self.say("keyhavend: \($0)", to: 2) })
        session.start()

        let syncing = Task.detached { await sync.run() }
        server.run()
        syncing.cancel()
        // A TPM without a resource manager keeps what the agent loaded until it is flushed.
        service.tpm.close()
    }

    /// Writes a line to a file descriptor, unbuffered.
    static func say(_ line: String, to fd: Int32 = 1) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// The session bus this process would join: `DBUS_SESSION_BUS_ADDRESS`, else the user's bus in
    /// `XDG_RUNTIME_DIR` (sd-bus's default); nil when neither is set.
    static func sessionBusAddress() -> String? {
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty { return address }
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty else { return nil }
        return "unix:path=\(runtime)/bus"
    }

    /// A connection to the agent that already serves this home's socket, if one does.
    static func runningAgent() -> AgentClient? {
        guard let home = try? KeychainHome.current() else { return nil }
        return try? AgentClient(socket: AgentSocket.current(), home: home.path)
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
    static func handOver(_ client: AgentClient) -> Never {
        do throws(StoreError) {
            guard let address = sessionBusAddress() else {
                throw StoreError(.notAvailable, "no session bus: DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset")
            }
            let provider = try client.send(.provideSecretService(busAddress: address)).provider()
            say("keyhavend: the running agent (pid \(provider)) provides \(SecretServiceNames.busName) on the session bus "
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
}
