import FoundationEssentials
import NIOSSL
import PostgresNIO

/// `--database-url`: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]`, as libpq
/// reads it (`postgresql://` too; the password percent-decoded). `sslmode` is `disable`, `prefer`
/// (the default: TLS when the server offers it) or `require`, which also checks the server's
/// certificate against the system's roots (`verify-full`'s meaning, the only safe one).
package struct DatabaseURL: Sendable, CustomStringConvertible {
    package let host: String
    package let port: Int
    package let user: String
    package let password: String?
    package let database: String
    package let sslMode: String

    package init(_ text: String) throws(SyncServerError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw SyncServerError(.badRequest, "--database-url is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        guard let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty else {
            throw SyncServerError(.badRequest, "--database-url needs a user and a host: postgres://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw SyncServerError(.badRequest, "--database-url needs a database: .../DATABASE") }
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        guard ["disable", "prefer", "require", "verify-full"].contains(mode) else {
            throw SyncServerError(.badRequest, "sslmode is disable, prefer or require")
        }
        (self.host, self.port, self.user, self.database, sslMode) = (host, components.port ?? 5432, user, database, mode)
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
    }

    /// postgres-nio's configuration for this URL.
    package func configuration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.clientDefault)
        default: tls = .require(.clientDefault)
        }
        return PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
    }

    /// The URL without its password (for messages and logs).
    package var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
