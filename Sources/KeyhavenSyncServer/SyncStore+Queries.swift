import FoundationEssentials
import KeyhavenSyncCore
import Logging
import PostgresNIO

extension SyncStore {
    /// Runs `body`, turning database failures into the server's errors (a unique violation is a
    /// conflict: the account or the entry is there already), and counting them. A body still
    /// running after ``SyncLimits/databaseWait`` is cancelled and the request answered 503 at once:
    /// while PostgreSQL is down the pool waits for it without end, and a client must hear so. (A
    /// push cancelled in its transaction is rolled back; one that commits all the same was not
    /// acknowledged, and the device's next pull finds it.)
    func database<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws(SyncServerError) -> R {
        metrics.databaseInUse.increment()
        defer { metrics.databaseInUse.decrement() }
        let wait = limits.databaseWait
        do {
            let late = SyncServerError(.unavailable, "the database did not answer within \(wait.components.seconds) seconds")
            return try await withDeadline(wait, expired: late, body)
        } catch {
            let refusal = Self.serverError(error)
            if refusal.code == .unavailable { metrics.databaseErrors.increment() }
            if refusal.code == .conflict { metrics.conflicts.increment() }
            throw refusal
        }
    }

    /// Wakes the polls on `topic` in every server, once the transaction of `connection` commits.
    static func notify(_ topic: Wakeups.Topic, in connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(ChangeListener.channel), \(topic.payload))", logger: logger)
    }

    /// Notes in the device index that `device` is on `account` (how a recovery finds the account).
    static func index(_ device: DeviceID, account: Data, in connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO keyhaven_device_accounts (device_id, account_id) VALUES (\(Data(device.bytes)), \(account))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    static func serverError(_ error: any Error) -> SyncServerError {
        if let error = error as? SyncServerError { return error }
        if let error = error as? SyncError { return SyncServerError(.badRequest, error.message) }
        if let error = error as? PostgresTransactionError {
            return serverError(error.closureError ?? error.beginError ?? error.commitError ?? error)
        }
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "23505" {
            return SyncServerError(.conflict, "already there")
        }
        return SyncServerError(.unavailable, "the database failed")
    }

    static func head(of account: Data, in connection: PostgresConnection, logger: Logger) async throws -> LogHead {
        let rows = try await connection.query("SELECT head_seq, head_hash FROM keyhaven_accounts WHERE account_id = \(account)", logger: logger)
        for try await (sequence, hash) in rows.decode((Int64, Data).self) { return LogHead(sequence: UInt64(sequence), hash: Array(hash)) }
        throw SyncServerError(.notFound, "no such account")
    }

    /// The signing key of `device` on the account, if it is there and not removed.
    static func activeKeys(of account: Data, device: DeviceID, in connection: PostgresConnection, logger: Logger) async throws -> DevicePublicKeys {
        let rows = try await connection.query("""
            SELECT signing_key, agreement_key, removed_at FROM keyhaven_devices WHERE account_id = \(account) AND device_id = \(Data(device.bytes))
            """, logger: logger)
        for try await (signing, agreement, removedAt) in rows.decode((Data, Data, Int64?).self) {
            guard removedAt == nil else { throw SyncServerError(.forbidden, "the device was removed from the account") }
            return try DevicePublicKeys(signing: Array(signing), agreement: Array(agreement))
        }
        _ = try await head(of: account, in: connection, logger: logger)
        throw SyncServerError(.forbidden, "the device is not on the account")
    }

    /// Whether these exact entries are stored already (a retried push).
    static func alreadyStored(_ entries: [LogEntry], encoded: [Data], in connection: PostgresConnection, logger: Logger) async throws -> Bool {
        for (entry, bytes) in zip(entries, encoded) {
            let rows = try await connection.query("""
                SELECT entry FROM keyhaven_entries
                WHERE account_id = \(Data(entry.account.bytes)) AND device_id = \(Data(entry.device.bytes))
                  AND device_counter = \(Int64(clamping: entry.deviceCounter))
                """, logger: logger)
            var stored: Data?
            for try await found in rows.decode(Data.self) { stored = found }
            guard let stored else { return false }
            guard stored == bytes else { throw SyncServerError(.conflict, "the device's counter \(entry.deviceCounter) is used by another entry") }
        }
        return true
    }

    /// Why the head did not move: no account, a quota, or (most often) a log that moved on.
    static func whyNotMoved(_ account: Data, entries: [LogEntry], in connection: PostgresConnection, logger: Logger) async throws -> SyncServerError {
        let head = try await head(of: account, in: connection, logger: logger)
        if let first = entries.first, head.sequence == first.sequence - 1, head.hash == first.previousHash {
            return SyncServerError(.quotaExceeded, "the account's quota is used up")
        }
        return SyncServerError(.conflict, "the log is at \(head.sequence): pull, then push again")
    }

    static func insert(_ entry: LogEntry, bytes: Data, into connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO keyhaven_entries (account_id, seq, device_id, device_counter, entry, entry_hash)
            VALUES (\(Data(entry.account.bytes)), \(Int64(clamping: entry.sequence)), \(Data(entry.device.bytes)),
                    \(Int64(clamping: entry.deviceCounter)), \(bytes), \(Data(entry.hash)))
            """, logger: logger)
    }

    /// Keeps the devices table in step with roster entries (public keys only).
    static func applyRoster(_ entry: LogEntry, account: Data, in connection: PostgresConnection, logger: Logger) async throws {
        switch entry.body {
        case .addDevice(let addition):
            try await connection.query("""
                INSERT INTO keyhaven_devices (account_id, device_id, signing_key, agreement_key)
                VALUES (\(account), \(Data(addition.device.bytes)), \(Data(addition.keys.signing)), \(Data(addition.keys.agreement)))
                """, logger: logger)
            try await index(addition.device, account: account, in: connection, logger: logger)
        case .removeDevice(let device):
            try await connection.query("""
                UPDATE keyhaven_devices SET removed_at = \(Int64(clamping: entry.sequence))
                WHERE account_id = \(account) AND device_id = \(Data(device.bytes))
                """, logger: logger)
        default:
            break
        }
    }
}
