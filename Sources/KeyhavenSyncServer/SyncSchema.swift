import Logging
import PostgresNIO

/// The server's tables, created and migrated by the server itself. It keeps nothing else: two
/// servers on one database serve the same accounts.
///
/// - `accounts`: the log's head (sequence and hash) per account, and what it uses of its quota.
/// - `devices`: each account's devices and their signing keys, read from the roster entries
///   (public keys only), and whether they were removed.
/// - `pairing`: the messages two devices exchange while one joins, by a slot id derived from the
///   pairing code (the server never sees the code), deleted when they expire.
/// - `entries`: the signed entries, by account and sequence; a device's counter is unique per
///   account, so a retried push cannot add an entry twice.
/// - `device_accounts`: the accounts each device was added to, by device: how a recovery key,
///   which knows its device and not its account, finds the account without a query over all of
///   `devices` (version 2).
///
/// Every table but `pairing` (by slot) and `device_accounts` (by device) is keyed by its account
/// first, so the schema can be distributed by account (docs/sync.md, "Beyond one PostgreSQL").
enum SyncSchema {
    static let version = 2

    static let statements: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS keyhaven_accounts (
            account_id BYTEA PRIMARY KEY,
            head_seq BIGINT NOT NULL,
            head_hash BYTEA NOT NULL,
            entry_count BIGINT NOT NULL DEFAULT 0,
            byte_count BIGINT NOT NULL DEFAULT 0,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS keyhaven_devices (
            account_id BYTEA NOT NULL REFERENCES keyhaven_accounts ON DELETE CASCADE,
            device_id BYTEA NOT NULL,
            signing_key BYTEA NOT NULL,
            agreement_key BYTEA NOT NULL,
            removed_at BIGINT,
            PRIMARY KEY (account_id, device_id)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS keyhaven_entries (
            account_id BYTEA NOT NULL REFERENCES keyhaven_accounts ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            device_id BYTEA NOT NULL,
            device_counter BIGINT NOT NULL,
            entry BYTEA NOT NULL,
            entry_hash BYTEA NOT NULL,
            PRIMARY KEY (account_id, seq),
            UNIQUE (account_id, device_id, device_counter)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS keyhaven_pairing (
            slot BYTEA NOT NULL,
            role SMALLINT NOT NULL,
            seq INT NOT NULL,
            message BYTEA NOT NULL,
            expires_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (slot, role, seq)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS keyhaven_device_accounts (
            device_id BYTEA NOT NULL,
            account_id BYTEA NOT NULL,
            PRIMARY KEY (device_id, account_id)
        )
        """,
        "CREATE TABLE IF NOT EXISTS keyhaven_schema (version INT NOT NULL)",
    ]

    /// Creates or migrates the tables, once even when several servers start together (an
    /// advisory lock for the transaction).
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7384451)", logger: logger)
            for statement in statements { try await connection.query(statement, logger: logger) }
            let rows = try await connection.query("SELECT version FROM keyhaven_schema", logger: logger)
            var versions: [Int] = []
            for try await version in rows.decode(Int.self) { versions.append(version) }
            guard let current = versions.max() else {
                try await connection.query("INSERT INTO keyhaven_schema (version) VALUES (\(version))", logger: logger)
                return
            }
            guard current <= version else {
                throw SyncServerError(.unavailable, "the database's schema (version \(current)) is newer than this server's (\(version))")
            }
            if current < 2 {
                try await connection.query("""
                    INSERT INTO keyhaven_device_accounts (device_id, account_id) SELECT device_id, account_id FROM keyhaven_devices
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            if current < version { try await connection.query("UPDATE keyhaven_schema SET version = \(version)", logger: logger) }
        }
    }
}
