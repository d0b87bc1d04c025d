import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncServer
import Logging
import PostgresNIO

/// A store on a test's own PostgreSQL cluster: a client, running while `body` runs.
enum StoreTest {
    /// A client as the server's: under its application name, so PostgreSQL's log shows its
    /// statements as the server's.
    static func client(_ postgres: TestPostgres) -> PostgresClient {
        var configuration = PostgresClient.Configuration(host: "127.0.0.1", port: postgres.port, username: postgres.user, password: nil,
                                                         database: postgres.database, tls: .disable)
        configuration.options.additionalStartupParameters = [("application_name", "keyhaven-sync-server")]
        return PostgresClient(configuration: configuration)
    }

    /// Limits whose wait for the database outlasts a loaded machine's slowest test: these tests
    /// are about what the store does, not about when it gives up.
    static var patient: SyncLimits {
        var limits = SyncLimits()
        limits.databaseWait = .seconds(300)
        return limits
    }

    /// Runs `body` with `count` stores, each with a client of its own (as separate servers have).
    static func withStores(_ postgres: TestPostgres, count: Int = 1, _ body: @Sendable ([SyncStore]) async throws -> Void) async throws {
        let clients = (0..<count).map { _ in client(postgres) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients { group.addTask { await client.run() } }
            let stores = clients.map { SyncStore(client: $0, logger: Logger(label: "keyhaven-sync-test"), limits: patient) }
            do {
                try await body(stores)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    static func code(_ body: () async throws -> Void) async -> SyncServerError.Code? {
        do {
            try await body()
            return nil
        } catch let error as SyncServerError {
            return error.code
        } catch {
            return nil
        }
    }
}

/// Devices writing one account's log, as the tests' clients.
struct TestAccount: Sendable {
    let account = AccountID()
    let viewKey = ViewKey(epoch: 1)
    let creator = DeviceIdentity()

    var genesis: LogEntry {
        LogEntry(.addDevice(RosterAddition(device: creator.id, keys: creator.publicKeys, name: "first", viewKey: viewKey, account: account)),
                 account: account, after: .empty, counter: 1, epoch: 1, signedBy: creator)
    }

    func record(_ payload: String, after head: LogHead, counter: UInt64, by device: DeviceIdentity) -> LogEntry {
        let sealed = SealedRecord.seal(Array(payload.utf8), record: RecordID(), syncClass: .a, version: counter, isDeleted: false,
                                       viewKey: viewKey, account: account)
        return LogEntry(.record(sealed), account: account, after: head, counter: counter, epoch: 1, signedBy: device)
    }

    func add(_ device: DeviceIdentity, after head: LogHead, counter: UInt64) -> LogEntry {
        LogEntry(.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: "another", viewKey: viewKey, account: account)),
                 account: account, after: head, counter: counter, epoch: 1, signedBy: creator)
    }
}
