import ArgumentParser
import FoundationEssentials
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// `keyhaven-sync-server`: serves sync accounts from a PostgreSQL database. It creates and
/// migrates its tables itself and keeps nothing else, so two servers on one database serve the
/// same accounts. Plain HTTP only on a loopback address; anywhere else it needs a certificate.
package struct SyncServerCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "keyhaven-sync-server",
        abstract: "Serve Keyhaven sync accounts (ciphertext only) from a PostgreSQL database.",
        discussion: """
            Devices push and pull their accounts' signed, encrypted logs; the server sees random ids, \
            padded sizes and device public keys, never an item. Plain HTTP is allowed only on a \
            loopback address (127.0.0.1, ::1, localhost); anywhere else give --tls-certificate and \
            --tls-key. Once listening it prints "keyhaven-sync-server: listening on HOST:PORT".
            """
    )

    @Option(name: .customLong("database-url"), help: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]")
    var databaseURL: String

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

    package init() {}

    package func validate() throws {
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
        guard rateLimit > 0 else { throw ValidationError("--rate-limit is a number above 0") }
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
    package func serve() async throws {
        var logger = Logger(label: "keyhaven-sync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let url = try DatabaseURL(databaseURL), address = try ServerBindAddress(bind)
        let client = PostgresClient(configuration: try url.configuration(), backgroundLogger: logger)
        let store = SyncStore(client: client, logger: logger)
        let router = SyncService(store: store).router(limiter: RateLimiter(perSecond: Double(rateLimit), burst: rateLimit * 4))
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
            services: [client],
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                // Written whole and at once, also to a pipe: scripts and tests wait for this line.
                let line = "keyhaven-sync-server: listening on \(host):\(port) (\(scheme)), database \(url)\n"
                _ = line.utf8CString.withUnsafeBufferPointer { write(STDOUT_FILENO, $0.baseAddress, $0.count - 1) }
            },
            logger: logger
        )
        app.beforeServerStarts { try await Self.migrate(store, url: url) }
        try await app.runService()
    }
}
