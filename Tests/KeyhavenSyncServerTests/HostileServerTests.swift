import Foundation
import KeychainModel
import KeychainStore
import KeychainTestSupport
import KeyhavenSyncEngine
import KeyhavenSyncProtocol
import Synchronization
import Testing

/// The sync server turned hostile: each device talks to a real server on a real PostgreSQL
/// cluster through a proxy of its own (``HostileProxy``) that plays an attack, and the device must
/// refuse it with the named error, keep its items and its pinned head, and sync again once the
/// server behaves.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct HostileServerTests {
    struct Setup {
        let postgres: TestPostgres
        let server: TestSyncServer
        let devices: [TestDevice]
        let proxies: [HostileProxy]
    }

    /// A cluster, a server, and devices each behind a proxy of its own, for `body`.
    static func withHostile(_ names: [String], environment: [String: String] = [:], _ body: (Setup) async throws -> Void) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url)
        defer { server.stop() }
        var proxies: [HostileProxy] = []
        for _ in names { proxies.append(try await HostileProxy(upstream: server.url)) }
        defer { proxies.forEach { $0.stop() } }
        let devices = try names.map(TestDevice.init)
        for device in devices { device.extraEnvironment = environment }
        try await body(Setup(postgres: postgres, server: server, devices: devices, proxies: proxies))
    }

    /// The first device creates the account; each other one joins; each through its own proxy.
    static func pair(_ setup: Setup, count: Int? = nil) throws -> String {
        let devices = Array(setup.devices.prefix(count ?? setup.devices.count))
        let created = try devices[0].keyhaven("sync", "create", "--server", setup.proxies[0].url, "--name", devices[0].name)
        #expect(created.status == 0, "\(created.error)")
        let key = created.output.split(separator: "\n").first { $0.hasPrefix("Recovery key: ") }?.dropFirst("Recovery key: ".count)
        for (index, other) in devices.enumerated().dropFirst() {
            let (invite, output) = try devices[0].start("sync", "invite", "--timeout", "60")
            let code = try SyncDeviceTests.firstLine(output)
            let joined = try other.keyhaven("sync", "join", "--server", setup.proxies[index].url, "--code", code, "--name", other.name)
            #expect(joined.status == 0, "\(joined.error)")
            invite.waitUntilExit()
        }
        for device in devices { try SyncDeviceTests.syncNow(device) }
        return String(key ?? "")
    }

    /// `sync now` on `device` fails, naming `refusal` (also in `sync status`), and changes neither
    /// its items nor its pinned head.
    static func expectRefusal(_ device: TestDevice, _ refusal: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let items = try device.items(), before = try status(device)["sequence"] as? Int
        let result = try device.keyhaven("sync", "now")
        #expect(result.status != 0 && result.error.contains("(\(refusal))"), "\(what): \(result.error)", sourceLocation: sourceLocation)
        let after = try status(device)
        #expect((after["refusal"] as? [String: Any])?["name"] as? String == refusal, "\(what)", sourceLocation: sourceLocation)
        #expect(after["sequence"] as? Int == before, "\(what): the pinned head moved", sourceLocation: sourceLocation)
        #expect(try device.items() == items, "\(what): the items changed", sourceLocation: sourceLocation)
    }

    static func status(_ device: TestDevice, _ arguments: String...) throws -> [String: Any] {
        let output = try device.run(TestDevice.binaries.appendingPathComponent("keyhaven").path, ["sync", "status", "--json"] + arguments).output
        return (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }

    /// The entries a device verified and keeps (its log cache: what the server holds).
    static func cachedEntries(_ device: TestDevice) throws -> [LogEntry] {
        let folder = device.home + "/sync"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".log") })
        var reader = ByteReader(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))))
        var entries: [LogEntry] = []
        while reader.remaining > 0 {
            let length = Int(try reader.u32())
            entries.append(try LogEntry(wireBytes: Array(try reader.take(length))))
        }
        return entries
    }

    /// The device's stored sync state (its private keys and view keys), as one who took the disk would.
    static func state(_ device: TestDevice) throws -> DeviceState {
        try #require(try SyncEngine(database: device.database, home: KeychainHome(path: device.home)).state())
    }

    @Test("Reordered, dropped, modified, replayed, swapped, downgraded, forged and rolled-back logs are each refused by name; the true log syncs after")
    func tamperedLogs() async throws {
        try await Self.withHostile(["writer", "reader", "other-account"]) { setup in
            let (a, b, x) = (setup.devices[0], setup.devices[1], setup.devices[2])
            try a.set("first", "one")
            _ = try Self.pair(setup, count: 2)
            // A second account on the same server, for a swap between accounts.
            try x.set("elsewhere", "another account's")
            #expect(try x.keyhaven("sync", "create", "--server", setup.server.url, "--name", "x").status == 0)
            let foreign = try #require(try Self.cachedEntries(x).last { if case .record = $0.body { true } else { false } })
            for index in 0..<4 { try a.set("new-\(index)", "value \(index)") }
            try SyncDeviceTests.syncNow(a)
            let writer = try #require(try Self.cachedEntries(a).first { $0.sequence == 1 }?.device)
            let old = try #require(try Self.cachedEntries(a).last { if case .record = $0.body { true } else { false } })
            let proxy = setup.proxies[1]
            func attack(_ refusal: String, _ what: String, _ move: @escaping @Sendable (AccountID, LogBatch) -> LogBatch) throws {
                proxy.onPull(move)
                try Self.expectRefusal(b, refusal, what)
            }
            try attack("broken chain", "reorder") { _, batch in
                var entries = batch.entries
                entries.swapAt(0, 1)
                return LogBatch(head: batch.head, entries: entries)
            }
            try attack("broken chain", "drop") { _, batch in
                LogBatch(head: batch.head, entries: batch.entries.enumerated().filter { $0.offset != 1 }.map(\.element))
            }
            try attack("bad signature", "modify") { _, batch in
                var entries = batch.entries
                entries[1] = Forge.flipping(entries[1], at: -70) ?? entries[1]
                return LogBatch(head: batch.head, entries: entries)
            }
            try attack("bad signature", "swap between records") { _, batch in
                var entries = batch.entries
                entries[0] = Forge.swappingBody(entries[0], from: entries[1]) ?? entries[0]
                return LogBatch(head: batch.head, entries: entries)
            }
            try attack("bad signature", "swap between accounts") { _, batch in
                var entries = batch.entries
                entries[0] = Forge.swappingBody(entries[0], from: foreign) ?? entries[0]
                return LogBatch(head: batch.head, entries: entries)
            }
            try attack("wrong account", "another account's entry") { _, batch in
                LogBatch(head: batch.head, entries: [Forge.moving(foreign, after: batch.entries[0].head)] + batch.entries)
            }
            try attack("replayed entry", "replay at a new position") { _, batch in
                let replayed = Forge.moving(old, after: batch.entries.last!.head)
                return LogBatch(head: replayed.head, entries: batch.entries + [replayed])
            }
            try attack("head regression", "rollback to a prefix") { _, batch in
                LogBatch(head: LogHead(sequence: batch.entries[0].sequence - 2, hash: batch.entries[0].previousHash), entries: [])
            }
            try attack("format downgrade", "format downgrade") { _, batch in
                var entries = batch.entries
                entries[0] = Forge.format(entries[0], 1) ?? entries[0]
                return LogBatch(head: batch.head, entries: entries)
            }
            try attack("unknown device", "a roster addition signed by the server's own key") { account, batch in
                let made = DeviceIdentity()
                let forged = LogEntry(.addDevice(RosterAddition(device: made.id, keys: made.publicKeys, name: "server's", viewKey: ViewKey(epoch: 1),
                                                                account: account)),
                                      account: account, after: batch.head, counter: 1, epoch: 1, signedBy: made)
                return LogBatch(head: forged.head, entries: batch.entries + [forged])
            }
            try attack("bad signature", "a roster addition in a device's name, signed by the server's key") { account, batch in
                let made = DeviceIdentity(), impostor = try! DeviceIdentity(id: writer, signingKey: Array(repeating: 7, count: 32),
                                                                             agreementKey: Array(repeating: 9, count: 32))
                let forged = LogEntry(.addDevice(RosterAddition(device: made.id, keys: made.publicKeys, name: "server's", viewKey: ViewKey(epoch: 1),
                                                                account: account)),
                                      account: account, after: batch.head, counter: 1_000, epoch: 1, signedBy: impostor)
                return LogBatch(head: forged.head, entries: batch.entries + [forged])
            }
            // The server behaves again: the next sync succeeds and brings everything.
            proxy.onPull(nil)
            try SyncDeviceTests.syncNow(b)
            #expect(try b.items().count == 5)
            #expect(try Self.status(b)["refusal"] is NSNull)
        }
    }
}
