import FoundationEssentials
import KeyhavenSyncCore
import Logging
import PostgresNIO

extension SyncStore {
    /// Runs `body`, turning database failures into the server's errors (a unique violation is a
    /// conflict: the account or the entry is there already).
    func database<R>(_ body: () async throws -> R) async throws(SyncServerError) -> R {
        do {
            return try await body()
        } catch {
            throw Self.serverError(error)
        }
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
