import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Testing

/// Every statement the server sends names its table's distribution key, bound to a value: the
/// account id for accounts, devices and entries, the slot for pairing, the device for the device
/// index. So a Citus deployment distributed by those columns routes each statement to one shard
/// (docs/sync.md, "Beyond one PostgreSQL"). The exceptions are named: the migration, the health
/// check, the listener's name and ping, notifications and the sweep of expired pairing messages.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct DistributionKeyTests {
    static let keys = ["keyhaven_accounts": "account_id", "keyhaven_devices": "account_id", "keyhaven_entries": "account_id",
                       "keyhaven_pairing": "slot", "keyhaven_device_accounts": "device_id"]

    /// Statements that name no key, each for its reason.
    static let exceptions: [(pattern: String, why: String)] = [
        (#"^(BEGIN|COMMIT|ROLLBACK|SELECT 1|LISTEN |UNLISTEN )"#, "transactions, the health check, the listener"),
        (#"^SET application_name = 'keyhaven-sync-server listener'$"#, "the listener naming its connection"),
        (#"^SELECT pg_notify\(\$1, \$2\)$"#, "a notification, on the coordinator"),
        (#"^SELECT pg_advisory_xact_lock\(|^CREATE TABLE IF NOT EXISTS |keyhaven_schema"#, "the migration"),
        (#"^INSERT INTO keyhaven_device_accounts \(device_id, account_id\) SELECT "#, "the migration's backfill of the device index"),
        (#"^DELETE FROM keyhaven_pairing WHERE expires_at < now\(\)$"#, "the sweep of expired pairing messages"),
    ]

    /// The statements PostgreSQL logged for `application`, in order, whitespace folded.
    static func statements(in log: String, application: String) -> [String] {
        var records: [String] = []
        for line in log.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.range(of: #"^\d{4}-\d\d-\d\d "#, options: .regularExpression) != nil { records.append(String(line)) }
            else if !records.isEmpty { records[records.count - 1] += " " + line }
        }
        return records.compactMap { record in
            let fields = record.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, fields[2] == application else { return nil }
            let message = fields[3]
            for marker in ["LOG:  statement: ", "LOG:  execute <unnamed>: "] {
                if let range = message.range(of: marker) {
                    return message[range.upperBound...].split(whereSeparator: \.isWhitespace).joined(separator: " ")
                }
            }
            return nil
        }
    }

    /// Why `statement` is fine, or nil when it names no key of a table it touches.
    static func check(_ statement: String) -> String? {
        if let exception = exceptions.first(where: { statement.range(of: $0.pattern, options: .regularExpression) != nil }) {
            return exception.why
        }
        let tables = Set(statement.matches(of: /keyhaven_[a-z_]+/).map { String($0.output) })
        guard !tables.isEmpty else { return nil }
        for table in tables {
            guard let key = keys[table] else { return nil }
            let compared = statement.range(of: #"\b\#(key) = \$\d+"#, options: .regularExpression) != nil
            let inserted = statement.range(of: #"^INSERT INTO \#(table) \([^)]*\b\#(key)\b[^)]*\) VALUES"#, options: .regularExpression) != nil
            guard compared || inserted else { return nil }
        }
        return "keyed"
    }

    @Test("Each statement the server sends, across every route, names its table's key or is a named exception")
    func everyStatementNamesItsKey() async throws {
        let postgres = try TestPostgres(settings: ["log_statement=all", "log_line_prefix=%m|%p|%a|"])
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url)
        defer { server.stop() }
        let client = try SyncClient(server: server.url), test = TestAccount(), other = DeviceIdentity()
        // Every route and every path through the store: a new account, a device added, a retried
        // push, a stale one, records, pulls at once and waiting, the recovery look-up, a removal,
        // the pairing relay, the health check, the sweep.
        var head = try await client.createAccount(test.genesis)
        let addition = LogBatch(head: head, entries: [test.add(other, after: head, counter: 2)])
        head = try await client.push(addition)
        #expect(try await client.push(addition) == head)
        _ = try? await client.push(LogBatch(head: addition.head, entries: [test.record("stale", after: addition.head, counter: 3, by: test.creator)]))
        head = try await client.push(LogBatch(head: head, entries: [test.record("by the other", after: head, counter: 1, by: other)]))
        _ = try await client.pull(test.account, after: 0, as: other)
        _ = try await client.pull(test.account, after: head.sequence, wait: 1, as: test.creator)
        #expect(try await client.account(of: other) == test.account)
        let removal = LogEntry(.removeDevice(other.id), account: test.account, after: head, counter: 4, epoch: 1, signedBy: test.creator)
        head = try await client.push(LogBatch(head: head, entries: [removal]))
        let slot = [UInt8](repeating: 0x5C, count: 32)
        try await client.postPairing(slot: slot, side: 0, message: [1])
        _ = try await client.pairingMessages(slot: slot, side: 0, after: 0, wait: 0)
        _ = try await client.pairingMessages(slot: slot, side: 0, after: 1, wait: 1)
        #expect(await client.isHealthy())
        try await StoreTest.withStores(postgres) { stores in try await stores[0].sweepPairing() }

        let statements = Self.statements(in: postgres.serverLog, application: "keyhaven-sync-server")
        let unkeyed = Set(statements.filter { Self.check($0) == nil })
        #expect(unkeyed.isEmpty, "statements that name no key:\n\(unkeyed.sorted().joined(separator: "\n"))")
        // The check saw the workload: every table, keyed, by many statements.
        let keyed = Set(statements.filter { Self.check($0) == "keyed" })
        let tables = Set(keyed.flatMap { $0.matches(of: /keyhaven_[a-z_]+/).map { String($0.output) } })
        #expect(tables == Set(Self.keys.keys), "\(tables)")
        #expect(keyed.count >= 12, "\(keyed.count) keyed statements")
    }

    @Test("The check refuses a statement that misses its key")
    func checkRefuses() {
        #expect(Self.check("SELECT account_id, signing_key FROM keyhaven_devices WHERE device_id = $1") == nil)
        #expect(Self.check("DELETE FROM keyhaven_pairing WHERE seq > $1") == nil)
        #expect(Self.check("UPDATE keyhaven_accounts SET head_seq = $1") == nil)
        #expect(Self.check("INSERT INTO keyhaven_entries (seq, entry) VALUES ($1, $2)") == nil)
        #expect(Self.check("SELECT entry FROM keyhaven_entries WHERE account_id = $1 AND seq > $2") == "keyed")
        #expect(Self.check("SELECT 1") != nil)
    }
}
