import Foundation

/// A throw-away PostgreSQL cluster for one test: `initdb` in a new temporary folder (as the
/// `postgres` user when the test runs as root, since initdb refuses root), then `pg_ctl start` on a
/// free loopback port with its socket in that folder, trust authentication and no fsync. `stop()`
/// stops it and removes the folder. Debian's `postgresql` package provides the binaries
/// (`scripts/bootstrap` installs it); without them, `TestPostgres.isAvailable` is false and the
/// tests that need a database say so and skip.
public final class TestPostgres: @unchecked Sendable {
    public let folder: String
    public let port: Int
    public let user = "kc"
    public let database = "keyhaven"

    /// The server binaries' folder (the newest version installed).
    public static var binaries: String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.last.map { "\(root)/\($0)/bin" }.flatMap { FileManager.default.fileExists(atPath: $0 + "/initdb") ? $0 : nil }
    }

    public static var isAvailable: Bool { binaries != nil }

    /// `postgres://kc@127.0.0.1:PORT/keyhaven`, trust authentication.
    public var url: String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// The server's settings beyond the defaults (`-c NAME=VALUE` each), kept across restarts.
    private let settings: [String]

    /// A new cluster; `settings` are more `NAME=VALUE` server settings (`log_statement=all`).
    public init(settings: [String] = []) throws {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed (scripts/bootstrap)") }
        folder = try TemporaryFolder.make(prefix: "keyhaven-postgres")
        port = try Self.freePort()
        self.settings = settings
        let asRoot = getuid() == 0
        if asRoot { try run("/bin/chown", ["-R", "postgres:postgres", folder]) }
        try run(binaries + "/initdb", ["-D", folder + "/data", "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"], asPostgres: asRoot)
        try startServer()
        try run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, database], asPostgres: asRoot)
    }

    /// PostgreSQL's own log: what it did and, with `log_statement=all`, every statement it ran.
    public var serverLog: String { (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? "" }

    /// Starts the server on the cluster (again, after ``stopServer(mode:)``), on the same port.
    public func startServer() throws {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed") }
        let options = (["listen_addresses=127.0.0.1", "fsync=off", "max_connections=200"] + settings).map { "-c '\($0)'" }.joined(separator: " ")
        try run(binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "60", "-o",
                                       "-p \(port) -k \(folder) \(options)", "start"],
                asPostgres: getuid() == 0, leavesDaemon: true)
    }

    /// Stops the server, keeping the cluster: `immediate` is a crash (recovery at the next start),
    /// `fast` a clean stop.
    public func stopServer(mode: String = "immediate") throws {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed") }
        try run(binaries + "/pg_ctl", ["-D", folder + "/data", "-m", mode, "-w", "stop"], asPostgres: getuid() == 0)
    }

    /// Runs one SQL statement with psql on the test database; psql's exit status.
    public func sql(_ statement: String) throws -> Int32 {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed") }
        let arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-c", statement]
        return getuid() == 0 ? try Shell.run("/usr/sbin/runuser", ["-u", "postgres", "--", binaries + "/psql"] + arguments)
                             : try Shell.run(binaries + "/psql", arguments)
    }

    /// A `pg_dump` of the test database, as text: what someone who took the database would have.
    public func dump() throws -> String {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed") }
        let file = folder + "/dump.sql"
        let command = "'\(binaries)/pg_dump' -h 127.0.0.1 -p \(port) -U \(user) \(database) > '\(file)'"
        let status = getuid() == 0 ? try Shell.run("/usr/sbin/runuser", ["-u", "postgres", "--", "/bin/sh", "-c", command])
                                   : try Shell.run("/bin/sh", ["-c", command])
        guard status == 0 else { throw TestPostgresError("pg_dump exited with \(status)") }
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    /// A copy of the test database, as it is now, under `name` (pg_dump into a new database, while
    /// servers keep using the original): the URL of the copy. A test's hostile server forks the
    /// log with it.
    public func copyDatabase(to name: String) throws -> String {
        guard let binaries = Self.binaries else { throw TestPostgresError("PostgreSQL's binaries are not installed") }
        let connection = "-h 127.0.0.1 -p \(port) -U \(user)"
        let command = "'\(binaries)/createdb' \(connection) \(name) && '\(binaries)/pg_dump' \(connection) \(database)"
            + " | '\(binaries)/psql' -q \(connection) -d \(name) -v ON_ERROR_STOP=1 > /dev/null"
        let status = getuid() == 0 ? try Shell.run("/usr/sbin/runuser", ["-u", "postgres", "--", "/bin/sh", "-c", command])
                                   : try Shell.run("/bin/sh", ["-c", command])
        guard status == 0 else { throw TestPostgresError("copying the database exited with \(status)") }
        return "postgres://\(user)@127.0.0.1:\(port)/\(name)"
    }

    /// Stops the cluster and removes its folder.
    public func stop() {
        try? stopServer()
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool = false, leavesDaemon: Bool = false) throws {
        let (command, list) = asPostgres ? ("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments) : (executable, arguments)
        let status = leavesDaemon ? try Shell.runLeavingDaemon(command, list) : try Shell.run(command, list)
        guard status == 0 else { throw TestPostgresError("\((executable as NSString).lastPathComponent) exited with \(status)") }
    }

    /// A loopback TCP port nothing listens on now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestPostgresError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
