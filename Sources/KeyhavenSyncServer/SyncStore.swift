import FoundationEssentials
import KeyhavenSyncCore
import Logging
import PostgresNIO

/// What one account may hold and one request may carry.
package struct SyncLimits: Sendable {
    package var entriesPerPush = 500
    package var entriesPerPull = 1_000
    package var entriesPerAccount = 1_000_000
    package var bytesPerAccount = 1 << 30
    /// The largest push body: the server reads no more of one (an entry may be 17 MiB).
    package var bytesPerPush = 64 << 20
    /// The longest a request waits for the database (a connection and its statements) before it
    /// is answered 503.
    package var databaseWait: Duration = .seconds(10)
    /// The request-body bytes the server holds at once from all clients: several addresses'
    /// largest pushes, so a few slow or stalled ones leave room for everyone else
    /// (``BodyBudget``).
    package var bytesInFlight = 256 << 20
    /// The longest a body may stop coming before it is answered 408.
    package var bodyIdle: Duration = .seconds(15)
    /// A body must come at ``minimumBodyRate`` bytes a second on average, counted from this long
    /// after it starts; a slower one is answered 408 and gives back what it held.
    package var bodyGrace: Duration = .seconds(10)
    package var minimumBodyRate = 64 << 10

    package init() {}
}

/// The server's log store on PostgreSQL. A push is one transaction whose first statement is a
/// compare-and-swap of the account's head: a stale push changes nothing and is a conflict; a push
/// retried after it succeeded (same device counters, same bytes) is a success that adds nothing.
/// The server checks what it can without any key: entries decode, continue the log, and are signed
/// by a device on the account; it never sees a record's contents.
package struct SyncStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    let limits: SyncLimits
    let metrics: SyncMetrics

    package init(client: PostgresClient, logger: Logger, limits: SyncLimits = SyncLimits(), metrics: SyncMetrics = SyncMetrics()) {
        (self.client, self.logger, self.limits, self.metrics) = (client, logger, limits, metrics)
    }

    /// Whether the database answers.
    package func ping() async throws(SyncServerError) {
        _ = try await database { try await client.query("SELECT 1", logger: logger) }
    }

    /// Creates or migrates the tables.
    package func migrate() async throws(SyncServerError) {
        try await database { try await SyncSchema.migrate(client, logger: logger) }
    }

    /// A new account whose log starts with `genesis` (its creator adding itself, signed by it).
    package func createAccount(_ genesis: LogEntry) async throws(SyncServerError) -> LogHead {
        do {
            _ = try LogState(account: genesis.account).verifying([genesis], serverHead: genesis.head)
        } catch {
            throw SyncServerError(.badRequest, "the first entry is not a device adding itself: \(error.message)")
        }
        guard case .addDevice(let addition) = genesis.body else { throw SyncServerError(.badRequest, "the first entry adds no device") }
        let bytes = Data(genesis.wireBytes), account = Data(genesis.account.bytes), head = genesis.head
        try await database {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("""
                    INSERT INTO keyhaven_accounts (account_id, head_seq, head_hash, entry_count, byte_count)
                    VALUES (\(account), \(Int64(head.sequence)), \(Data(head.hash)), 1, \(Int64(bytes.count)))
                    """, logger: logger)
                try await connection.query("""
                    INSERT INTO keyhaven_devices (account_id, device_id, signing_key, agreement_key)
                    VALUES (\(account), \(Data(addition.device.bytes)), \(Data(addition.keys.signing)), \(Data(addition.keys.agreement)))
                    """, logger: logger)
                try await Self.index(addition.device, account: account, in: connection, logger: logger)
                try await Self.insert(genesis, bytes: bytes, into: connection, logger: logger)
            }
        }
        return head
    }

    /// Appends `entries` (one device's, consecutive, continuing the account's head); the new head.
    package func push(_ entries: [LogEntry]) async throws(SyncServerError) -> LogHead {
        guard let first = entries.first, let last = entries.last else { throw SyncServerError(.badRequest, "no entries") }
        guard entries.count <= limits.entriesPerPush else { throw SyncServerError(.tooLarge, "more than \(limits.entriesPerPush) entries") }
        for (entry, next) in zip(entries, entries.dropFirst()) where next.sequence != entry.sequence + 1 || next.previousHash != entry.hash {
            throw SyncServerError(.badRequest, "the entries do not follow each other")
        }
        guard entries.allSatisfy({ $0.account == first.account && $0.device == first.device }) else {
            throw SyncServerError(.badRequest, "a push is one device's entries for one account")
        }
        let account = Data(first.account.bytes)
        let encoded = entries.map { Data($0.wireBytes) }
        let byteCount = encoded.reduce(0) { $0 + $1.count }
        let head = try await database { () throws -> LogHead in
            try await client.withTransaction(logger: logger) { connection in
                if try await Self.alreadyStored(entries, encoded: encoded, in: connection, logger: logger) {
                    return try await Self.head(of: account, in: connection, logger: logger)
                }
                let keys = try await Self.activeKeys(of: account, device: first.device, in: connection, logger: logger)
                guard entries.allSatisfy({ $0.isSigned(by: keys) }) else { throw SyncServerError(.forbidden, "an entry's signature does not verify") }
                // The notification rides on the compare-and-swap (no round trip of its own);
                // PostgreSQL delivers it when this transaction commits, to every server listening.
                let topic = Wakeups.Topic.account(first.account).payload
                let updated = try await connection.query("""
                    UPDATE keyhaven_accounts
                    SET head_seq = \(Int64(last.sequence)), head_hash = \(Data(last.hash)),
                        entry_count = entry_count + \(Int64(entries.count)), byte_count = byte_count + \(Int64(byteCount))
                    WHERE account_id = \(account) AND head_seq = \(Int64(first.sequence) - 1) AND head_hash = \(Data(first.previousHash))
                      AND entry_count + \(Int64(entries.count)) <= \(Int64(limits.entriesPerAccount))
                      AND byte_count + \(Int64(byteCount)) <= \(Int64(limits.bytesPerAccount))
                    RETURNING head_seq, pg_notify(\(ChangeListener.channel), \(topic)) IS NOT NULL
                    """, logger: logger)
                var moved = false
                for try await _ in updated.decode((Int64, Bool).self) { moved = true }
                guard moved else { throw try await Self.whyNotMoved(account, entries: entries, in: connection, logger: logger) }
                for (entry, bytes) in zip(entries, encoded) {
                    try await Self.insert(entry, bytes: bytes, into: connection, logger: logger)
                    try await Self.applyRoster(entry, account: account, in: connection, logger: logger)
                }
                return last.head
            }
        }
        metrics.pushes.increment()
        metrics.pushedEntries.increment(by: entries.count)
        metrics.notificationsSent.increment()
        return head
    }

    /// The public keys of `device` while it is on the account: forbidden when it is not or was
    /// removed, not found when there is no such account.
    package func deviceKeys(_ accountID: AccountID, device: DeviceID) async throws(SyncServerError) -> DevicePublicKeys {
        let account = Data(accountID.bytes)
        return try await database {
            try await client.withConnection { connection in
                try await Self.activeKeys(of: account, device: device, in: connection, logger: logger)
            }
        }
    }

    /// The account `device` is on (not removed) and its public keys: how a recovery key, which
    /// holds no account id, finds its account. Not found when there is none. The device index
    /// gives the accounts the device was ever added to; each is then asked by its account id.
    package func account(of device: DeviceID) async throws(SyncServerError) -> (AccountID, DevicePublicKeys) {
        try await database { () throws -> (AccountID, DevicePublicKeys) in
            try await client.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT account_id FROM keyhaven_device_accounts WHERE device_id = \(Data(device.bytes))", logger: logger)
                var accounts: [Data] = []
                for try await account in rows.decode(Data.self) { accounts.append(account) }
                for account in accounts {
                    guard let id = AccountID(bytes: Array(account)) else { continue }
                    do {
                        return (id, try await Self.activeKeys(of: account, device: device, in: connection, logger: logger))
                    } catch let refusal as SyncServerError where refusal.code == .forbidden || refusal.code == .notFound {
                        // Removed from that account, or the account is gone: the next one, if any.
                        continue
                    }
                }
                throw SyncServerError(.notFound, "no account has that device")
            }
        }
    }

    /// The entries after `sequence` (at most the pull limit), and the head.
    package func pull(_ accountID: AccountID, after sequence: UInt64) async throws(SyncServerError) -> (entries: [LogEntry], head: LogHead) {
        let account = Data(accountID.bytes)
        return try await database { () throws -> ([LogEntry], LogHead) in
            try await client.withTransaction(logger: logger) { connection in
                let head = try await Self.head(of: account, in: connection, logger: logger)
                let rows = try await connection.query("""
                    SELECT entry FROM keyhaven_entries WHERE account_id = \(account) AND seq > \(Int64(clamping: sequence))
                    ORDER BY seq LIMIT \(limits.entriesPerPull)
                    """, logger: logger)
                var entries: [LogEntry] = []
                for try await bytes in rows.decode(Data.self) { entries.append(try LogEntry.decode(Array(bytes))) }
                return (entries, head)
            }
        }
    }
}
