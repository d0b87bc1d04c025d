import ArgumentParser
import CHardening
import FoundationEssentials
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import KeychainModel
import Logging
import NIOCore
import Metrics
import NIOSSL
import PostgresNIO
import Prometheus
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyhaven-sync-server`: serves sync accounts from a PostgreSQL database. It creates and
/// migrates its tables itself and keeps nothing else, so any number of servers on one database
/// serve the same accounts; PostgreSQL's notifications wake their long polls. Plain HTTP only on a
/// loopback address; anywhere else it needs a certificate.
package struct SyncServerCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "keyhaven-sync-server",
        abstract: "Serve Keyhaven sync accounts (ciphertext only) from a PostgreSQL database.",
        discussion: """
            Devices push and pull their accounts' signed, encrypted logs; the server sees random ids, \
            padded sizes and device public keys, never an item. Plain HTTP is allowed only on a \
            loopback address (127.0.0.1, ::1, localhost); anywhere else give --tls-certificate and \
            --tls-key. Once listening it prints "keyhaven-sync-server: listening on HOST:PORT". \
            Any number of servers may share one database. SIGTERM or SIGINT stops it within \
            \(Self.shutdownBound.components.seconds) seconds: waiting polls are answered, new connections refused.
            """,
        version: KeyhavenRelease.version
    )

    @Option(name: .customLong("database-url"), help: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]")
    var databaseURLArgument: String?

    @Option(name: .customLong("database-url-file"),
            help: "A file whose first line is the --database-url, so that its password is not on the command line (systemd's LoadCredential).")
    var databaseURLFile: String?

    @Option(help: "The address and port to listen on, HOST:PORT (port 0: any free port).")
    var bind: String = "127.0.0.1:8787"

    @Option(name: .customLong("tls-certificate"), help: "PEM certificate chain for HTTPS.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for HTTPS.")
    var tlsKey: String?

    @Option(name: .customLong("rate-limit"), help: "Requests per second per client address (bursts of four times as many).")
    var rateLimit: Int = 50

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: "Serve Prometheus metrics (plain HTTP, GET /metrics) on HOST:PORT; counts only, nothing of an account.")
    var metrics: String?

    @Option(name: .customLong("database-connections"), help: "The most connections to PostgreSQL this server opens (its pool).")
    var databaseConnections: Int = 20

    @Option(name: .customLong("trusted-proxy"),
            help: "A load balancer's address (repeatable): its requests' client is the address it appends to X-Forwarded-For.")
    var trustedProxies: [String] = []

    @Option(name: .customLong("database-timeout"), help: "Seconds a request waits for PostgreSQL before it is answered 503.")
    var databaseTimeout: Int = 10

    @Option(name: .customLong("bytes-in-flight"),
            help: "MiB of request bodies the server holds at once from all clients (each address holds at most one push's 64 MiB).")
    var bytesInFlight: Int = 256

    @Option(name: .customLong("body-timeout"),
            help: "Seconds a request body may stop coming; from then on it must average --minimum-body-rate, else it is answered 408.")
    var bodyTimeout: Int = 15

    @Option(name: .customLong("minimum-body-rate"), help: "KiB a second a request body must average once --body-timeout has passed.")
    var minimumBodyRate: Int = 64

    /// The longest a graceful shutdown takes before what is left is cancelled; then at most
    /// ``cancellationBound`` more.
    static let gracefulBound: Duration = .seconds(3)
    static let cancellationBound: Duration = .seconds(1)
    static var shutdownBound: Duration { gracefulBound + cancellationBound }

    package init() {}

    /// The database's URL, from `--database-url` or the first line of `--database-url-file`.
    var databaseURL: String {
        get throws(SyncServerError) {
            if let databaseURLArgument { return databaseURLArgument }
            guard let databaseURLFile else { throw SyncServerError(.badRequest, "give --database-url or --database-url-file") }
            guard let contents = try? String(contentsOfFile: databaseURLFile, encoding: .utf8) else {
                throw SyncServerError(.badRequest, "--database-url-file \(databaseURLFile) cannot be read")
            }
            return String(contents.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    package func validate() throws {
        guard (databaseURLArgument == nil) != (databaseURLFile == nil) else {
            throw ValidationError("give one of --database-url and --database-url-file")
        }
        let address: ServerBindAddress
        do {
            _ = try DatabaseURL(databaseURL)
            address = try ServerBindAddress(bind)
        } catch {
            throw ValidationError(error.message)
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else { throw ValidationError("--tls-certificate and --tls-key go together") }
        guard tlsCertificate != nil || address.isLoopback else {
            throw ValidationError("plain HTTP is allowed only on a loopback address; give --tls-certificate and --tls-key to listen on \(address)")
        }
        if let metrics, (try? ServerBindAddress(metrics)) == nil { throw ValidationError("--metrics is HOST:PORT (or [IPV6]:PORT)") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit is a number above 0") }
        guard (2...1000).contains(databaseConnections) else { throw ValidationError("--database-connections is a number from 2 to 1000") }
        for proxy in trustedProxies where !Self.isIPAddress(proxy) {
            throw ValidationError("--trusted-proxy is an IP address (\(proxy) is not)")
        }
        guard (1...300).contains(databaseTimeout) else { throw ValidationError("--database-timeout is a number of seconds from 1 to 300") }
        guard (64...65_536).contains(bytesInFlight) else { throw ValidationError("--bytes-in-flight is a number of MiB from 64 to 65536") }
        guard (1...600).contains(bodyTimeout) else { throw ValidationError("--body-timeout is a number of seconds from 1 to 600") }
        guard (0...1_048_576).contains(minimumBodyRate) else { throw ValidationError("--minimum-body-rate is a number of KiB from 0 to 1048576") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level is trace, debug, info, notice, warning, error or critical") }
    }

    /// Creates or migrates the tables before the server listens; a database that cannot be
    /// reached within 30 seconds stops the server with a message naming it (not its password).
    static func migrate(_ store: SyncStore, url: DatabaseURL) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await store.migrate()
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return false
            }
            let migrated = try await group.next() ?? false
            group.cancelAll()
            guard migrated else { throw ValidationError("the database at \(url) could not be reached within 30 seconds") }
        }
    }

    /// Serves until SIGTERM or SIGINT (the executable's main parses, then calls this).
    ///
    /// The services start together and stop in reverse: the listener first (every waiting poll
    /// answers at once), then the HTTP servers (no new connection; requests running finish), then
    /// the database pool. Past ``gracefulBound`` what is left is cancelled: a push cut short is a
    /// transaction PostgreSQL rolls back, so nothing is half-written.
    package func serve() async throws {
        // A request body of a MiB or more is mapped on its own, so what a flood of bodies took
        // goes back to the system when they end.
        _ = kh_map_large_buffers(1 << 20)
        var logger = Logger(label: "keyhaven-sync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let registry = PrometheusCollectorRegistry()
        if metrics != nil { MetricsSystem.bootstrap(SyncMetrics.prometheus(registry)) }
        let counters = SyncMetrics()
        let url = try DatabaseURL(databaseURL), address = try ServerBindAddress(bind)
        var configuration = try url.configuration()
        configuration.options.maximumConnections = databaseConnections
        // Named in pg_stat_activity and in PostgreSQL's log (`%a`), for its administrator.
        configuration.options.additionalStartupParameters = [("application_name", "keyhaven-sync-server")]
        counters.databasePoolSize.set(databaseConnections)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        var limits = SyncLimits()
        limits.databaseWait = .seconds(databaseTimeout)
        limits.bytesInFlight = bytesInFlight << 20
        (limits.bodyIdle, limits.bodyGrace) = (.seconds(bodyTimeout), .seconds(bodyTimeout))
        limits.minimumBodyRate = minimumBodyRate << 10
        let store = SyncStore(client: client, logger: logger, limits: limits, metrics: counters)
        let wakeups = Wakeups(metrics: counters)
        let router = SyncService(store: store, wakeups: wakeups, bodies: BodyBudget(perAddress: limits.bytesPerPush, total: limits.bytesInFlight))
            .router(limiter: RateLimiter(perSecond: Double(rateLimit), burst: rateLimit * 4), trustedProxies: Set(trustedProxies),
                    measured: metrics != nil)
        let server: HTTPServerBuilder
        if let tlsCertificate, let tlsKey {
            let chain = try NIOSSLCertificate.fromPEMFile(tlsCertificate).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: tlsKey, format: .pem)
            let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
            server = try .tls(.http1(), tlsConfiguration: configuration)
        } else {
            server = .http1()
        }
        let scheme = tlsCertificate == nil ? "http" : "https"
        var app = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                Self.announce("listening on \(ServerBindAddress.display(address.host, channel.localAddress?.port ?? address.port)) (\(scheme)), database \(url)")
            },
            logger: logger
        )
        app.beforeServerStarts { try await Self.migrate(store, url: url) }
        var services: [any Service] = [client, app]
        if let metrics {
            let metricsAddress = try ServerBindAddress(metrics)
            let metricsRouter = Router()
            metricsRouter.get("/metrics") { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                         body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
            services.append(Application(
                router: metricsRouter,
                configuration: .init(address: .hostname(metricsAddress.host, port: metricsAddress.port), serverName: nil),
                onServerRunning: { channel in
                    Self.announce("metrics on \(ServerBindAddress.display(metricsAddress.host, channel.localAddress?.port ?? metricsAddress.port))")
                },
                logger: logger
            ))
        }
        services += [PairingSweep(store: store), ChangeListener(client: client, wakeups: wakeups, metrics: counters, logger: logger)]
        var group = ServiceGroupConfiguration(services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
                                              logger: logger)
        group.maximumGracefulShutdownDuration = Self.gracefulBound
        group.maximumCancellationDuration = Self.cancellationBound
        try await ServiceGroup(configuration: group).run()
    }

    static func isIPAddress(_ text: String) -> Bool {
        (try? SocketAddress(ipAddress: text, port: 0)) != nil
    }

    /// One line on standard output, written whole and at once, also to a pipe: scripts and tests
    /// wait for these lines.
    static func announce(_ text: String) {
        let line = "keyhaven-sync-server: \(text)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(STDOUT_FILENO, $0.baseAddress, $0.count - 1) }
    }
}
