import Foundation
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncServer
import Logging
import Testing

/// The server's store on a real PostgreSQL cluster the test starts: compare-and-swap pushes,
/// idempotent retries, devices, two servers on one database, and a database that holds no
/// plaintext.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncStoreTests {
    @Test("An account is created once; pushes continue its head; a pull verifies on a device")
    func pushAndPull() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount()
        try await StoreTest.withStores(postgres) { stores in
            let store = stores[0]
            try await store.migrate()
            try await store.migrate()
            let head = try await store.createAccount(test.genesis)
            #expect(await StoreTest.code { _ = try await store.createAccount(test.genesis) } == .conflict)
            let entries = (0..<3).reduce(into: [LogEntry]()) { list, index in
                list.append(test.record("item \(index)", after: list.last?.head ?? head, counter: UInt64(index) + 2, by: test.creator))
            }
            let newHead = try await store.push(entries)
            #expect(newHead == entries.last?.head)
            let pulled = try await store.pull(test.account, after: 0)
            #expect(pulled.head == newHead && pulled.entries.count == 4)
            let state = try LogState(account: test.account).verifying(pulled.entries, serverHead: pulled.head)
            #expect(state.head == newHead)
            let partial = try await store.pull(test.account, after: 2)
            #expect(partial.entries.map(\.sequence) == [3, 4])
            #expect(await StoreTest.code { _ = try await store.pull(AccountID(), after: 0) } == .notFound)
        }
    }

    @Test("A stale push is a conflict and changes nothing; a retried push adds nothing; strangers are forbidden")
    func compareAndSwap() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount()
        let second = DeviceIdentity(), stranger = DeviceIdentity()
        try await StoreTest.withStores(postgres) { stores in
            let store = stores[0]
            try await store.migrate()
            let genesis = try await store.createAccount(test.genesis)
            let added = test.add(second, after: genesis, counter: 2)
            let afterAdd = try await store.push([added])
            // Two devices push at the same head: the second is told to pull.
            let mine = test.record("mine", after: afterAdd, counter: 3, by: test.creator)
            let theirs = test.record("theirs", after: afterAdd, counter: 1, by: second)
            let head = try await store.push([mine])
            #expect(await StoreTest.code { _ = try await store.push([theirs]) } == .conflict)
            // The retry of the first push succeeds and adds nothing.
            #expect(try await store.push([mine]) == head)
            #expect(try await store.pull(test.account, after: 0).entries.count == 3)
            // After pulling, the second device pushes on the new head.
            let rebased = test.record("theirs", after: head, counter: 1, by: second)
            _ = try await store.push([rebased])
            // A device not on the account, and a signature made by another key, are refused.
            #expect(await StoreTest.code { _ = try await store.push([test.record("x", after: rebased.head, counter: 1, by: stranger)]) }
                    == .forbidden)
            // Not consecutive, or two devices' entries in one push: a bad request.
            let one = test.record("a", after: rebased.head, counter: 4, by: test.creator)
            let gap = test.record("b", after: LogHead(sequence: one.sequence + 1, hash: one.hash), counter: 5, by: test.creator)
            #expect(await StoreTest.code { _ = try await store.push([one, gap]) } == .badRequest)
            #expect(await StoreTest.code { _ = try await store.push([]) } == .badRequest)
            #expect(try await store.pull(test.account, after: 0).head == rebased.head)
        }
    }

    @Test("An account over its quota: 507, and nothing changes")
    func quota() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount()
        let client = StoreTest.client(postgres)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            var limits = StoreTest.patient
            limits.entriesPerAccount = 3
            let store = SyncStore(client: client, logger: Logger(label: "keyhaven-sync-test"), limits: limits)
            try await store.migrate()
            var head = try await store.createAccount(test.genesis)
            for counter in 2...3 { head = try await store.push([test.record("fits", after: head, counter: UInt64(counter), by: test.creator)]) }
            #expect(await StoreTest.code { _ = try await store.push([test.record("over", after: head, counter: 4, by: test.creator)]) } == .quotaExceeded)
            #expect(try await store.pull(test.account, after: 0).head == head)
            group.cancelAll()
        }
    }

    @Test("Two servers on one database: concurrent pushes at one head, exactly one wins; both serve the result")
    func twoServers() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount()
        let second = DeviceIdentity()
        try await StoreTest.withStores(postgres, count: 2) { stores in
            async let migrateA: Void = stores[0].migrate()
            async let migrateB: Void = stores[1].migrate()
            _ = try await (migrateA, migrateB)
            let genesis = try await stores[0].createAccount(test.genesis)
            let head = try await stores[1].push([test.add(second, after: genesis, counter: 2)])
            for round in 0..<10 {
                let current = try await stores[0].pull(test.account, after: 0).head
                let a = test.record("a\(round)", after: current, counter: UInt64(round) + 3, by: test.creator)
                let b = test.record("b\(round)", after: current, counter: UInt64(round) + 1, by: second)
                async let first = StoreTest.code { _ = try await stores[0].push([a]) }
                async let other = StoreTest.code { _ = try await stores[1].push([b]) }
                let results = await [first, other]
                #expect(results.filter { $0 == nil }.count == 1 && results.filter { $0 == .conflict }.count == 1, "\(results)")
                if results[1] == nil {
                    // b won: a's counter is unused; nothing to do. (Counters need not be dense.)
                }
            }
            let fromA = try await stores[0].pull(test.account, after: 0), fromB = try await stores[1].pull(test.account, after: 0)
            #expect(fromA.head == fromB.head && fromA.entries == fromB.entries && fromA.entries.count == 12)
            _ = try LogState(account: test.account).verifying(fromA.entries, serverHead: fromA.head)
            _ = head
        }
    }

    @Test("A database at schema version 1 gets the device index, filled from its devices; a recovery finds its account through it")
    func migrateFromVersionOne() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount(), joined = DeviceIdentity()
        try await StoreTest.withStores(postgres) { stores in
            let store = stores[0]
            try await store.migrate()
            let head = try await store.createAccount(test.genesis)
            _ = try await store.push([test.add(joined, after: head, counter: 2)])
            // Version 1 had no index.
            #expect(try postgres.sql("DROP TABLE keyhaven_device_accounts; UPDATE keyhaven_schema SET version = 1") == 0)
            #expect(await StoreTest.code { _ = try await store.account(of: joined.id) } == .unavailable)
            try await store.migrate()
            #expect(try await store.account(of: joined.id).0 == test.account)
            #expect(try await store.account(of: test.creator.id).0 == test.account)
            #expect(try postgres.sql("DO $$ BEGIN IF (SELECT version FROM keyhaven_schema) <> 2 THEN RAISE 'not migrated'; END IF; END $$") == 0)
            // A newer schema than the server's stops it.
            #expect(try postgres.sql("UPDATE keyhaven_schema SET version = 3") == 0)
            #expect(await StoreTest.code { try await store.migrate() } == .unavailable)
        }
    }

    @Test("The database holds no trace of what the entries carry: canaries raw, in hex and in base64 are not in pg_dump")
    func noPlaintextInDatabase() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let test = TestAccount()
        let canaries = (0..<16).map { _ in "canary-\(UUID().uuidString)" }
        try await StoreTest.withStores(postgres) { stores in
            let store = stores[0]
            try await store.migrate()
            var head = try await store.createAccount(test.genesis)
            for (index, canary) in canaries.enumerated() {
                head = try await store.push([test.record(canary, after: head, counter: UInt64(index) + 2, by: test.creator)])
            }
        }
        let text = try postgres.dump()
        #expect(text.contains("keyhaven_entries"))
        for canary in canaries {
            let forms = [canary, Data(canary.utf8).map { String(format: "%02x", $0) }.joined(), Data(canary.utf8).base64EncodedString()]
            for form in forms { #expect(!text.contains(String(form.prefix(20)))) }
        }
    }
}
