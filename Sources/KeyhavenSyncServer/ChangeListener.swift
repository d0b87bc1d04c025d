import Logging
import PostgresNIO
import ServiceLifecycle

/// The one connection of this server that `LISTEN`s on ``channel``, handing each notification to
/// ``Wakeups``. When the connection fails (PostgreSQL restarted, the backend terminated, a
/// network cut a ping finds) every waiting poll looks again, the listener connects again with a
/// growing pause, and once it listens every poll looks once more: a change missed in between is
/// found by that look, never left for the poll's full wait.
///
/// On graceful shutdown it stops listening and tells ``Wakeups`` to answer every poll.
package struct ChangeListener: Service, CustomStringConvertible {
    /// The channel pushes and pairing messages notify on; the payload is a ``Wakeups/Topic``.
    package static let channel = "keyhaven_changes"
    /// The listening backend's `application_name`, so that an administrator (and a test) can tell
    /// it from the pool's in pg_stat_activity whatever query it ran last.
    package static let applicationName = "keyhaven-sync-server listener"

    let client: PostgresClient
    let wakeups: Wakeups
    let metrics: SyncMetrics
    let logger: Logger
    /// How often the listening connection is checked with a query (a connection cut without a
    /// word would otherwise look like a quiet database).
    let pingInterval: Duration

    package init(client: PostgresClient, wakeups: Wakeups, metrics: SyncMetrics, logger: Logger, pingInterval: Duration = .seconds(30)) {
        (self.client, self.wakeups, self.metrics, self.logger, self.pingInterval) = (client, wakeups, metrics, logger, pingInterval)
    }

    package var description: String { "ChangeListener" }

    package func run() async throws {
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown { await listen() }
        } onGracefulShutdown: {
            wakeups.stop()
        }
        wakeups.stop()
    }

    private func listen() async {
        var pause: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    do {
                        _ = try await connection.query("SET application_name = '\(unescaped: Self.applicationName)'", logger: logger)
                        try await connection.listen(on: Self.channel) { notifications in
                            wakeups.listening(true)
                            pause = .milliseconds(100)
                            logger.debug("listening for changes")
                            try await withThrowingTaskGroup(of: Void.self) { group in
                                group.addTask {
                                    for try await notification in notifications { wakeups.deliver(notification.payload) }
                                    throw CancellationError()
                                }
                                group.addTask {
                                    while true {
                                        try await Task.sleep(for: pingInterval)
                                        _ = try await connection.query("SELECT 1", logger: logger)
                                    }
                                }
                                try await group.next()
                            }
                        }
                    } catch {
                        // Failed under the listener (its backend terminated, PostgreSQL gone): closed
                        // before the pool takes it back, so that no request is handed a dead connection.
                        try? await connection.close()
                        throw error
                    }
                }
            } catch {
                if !Task.isCancelled {
                    logger.warning("the connection listening for changes failed; polls look at the database until it is back",
                                   metadata: ["error": "\(String(reflecting: type(of: error)))"])
                }
            }
            wakeups.listening(false)
            guard !Task.isCancelled else { return }
            metrics.listenerReconnects.increment()
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }
}
