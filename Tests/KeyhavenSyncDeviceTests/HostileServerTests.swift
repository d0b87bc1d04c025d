import Foundation
import KeychainModel
import KeychainStore
import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncDevice
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
            let code = try SyncDevices.firstLine(output)
            let joined = try other.keyhaven("sync", "join", "--server", setup.proxies[index].url, "--code", code, "--name", other.name)
            #expect(joined.status == 0, "\(joined.error)")
            invite.waitUntilExit()
        }
        for device in devices { try SyncDevices.syncNow(device) }
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
            let foreign = try #require(try Self.cachedEntries(x).last(where: \.body.isRecord))
            for index in 0..<4 { try a.set("new-\(index)", "value \(index)") }
            try SyncDevices.syncNow(a)
            let writer = try #require(try Self.cachedEntries(a).first { $0.sequence == 1 }?.device)
            let old = try #require(try Self.cachedEntries(a).last(where: \.body.isRecord))
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
            // A true earlier head of b's: the log as it was two entries ago.
            let earlier = try #require(try Self.cachedEntries(b).dropLast(2).last?.head)
            try attack("head regression", "rollback to a prefix") { _, _ in LogBatch(head: earlier, entries: []) }
            try attack("fork detected", "another history behind the verified head") { _, _ in
                LogBatch(head: LogHead(sequence: earlier.sequence, hash: Array(repeating: 7, count: 32)), entries: [])
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
            try SyncDevices.syncNow(b)
            #expect(try b.items().count == 5)
            #expect(try Self.status(b)["refusal"] is NSNull)
        }
    }

    @Test("Pairing with a mistyped code, and with the joiner's public key swapped in the relay, fails on both sides by name; nobody is added")
    func pairingAttacks() async throws {
        try await Self.withHostile(["trusted", "newcomer"]) { setup in
            let (a, b) = (setup.devices[0], setup.devices[1])
            #expect(try a.keyhaven("sync", "create", "--server", setup.proxies[0].url, "--name", "trusted").status == 0)
            func attempt(_ what: String, code transform: (String) -> String) throws {
                let (invite, output) = try a.start("sync", "invite", "--timeout", "30")
                let code = try SyncDevices.firstLine(output)
                let joined = try b.keyhaven("sync", "join", "--server", setup.proxies[1].url, "--code", transform(code), "--name", "newcomer")
                invite.waitUntilExit()
                #expect(invite.terminationStatus != 0, "\(what): the invite succeeded")
                #expect(joined.status != 0 && joined.error.contains("pairing authentication failure"), "\(what): \(joined.error)")
                #expect(try b.keyhaven("sync", "status", "--json").output.contains("\"syncing\":false"))
            }
            try attempt("a mistyped code") { code in
                let last = code.last!
                return String(code.dropLast()) + (last == "A" ? "B" : "A")
            }
            // The joiner's request with another public key in it (the server's own).
            setup.proxies[1].onRelay { side, message in
                guard side == 1, message.count > 40 else { return message }
                var changed = message
                for index in 16..<48 { changed[index] = UInt8(truncatingIfNeeded: index) }
                return changed
            }
            try attempt("a public key swapped in the relay") { $0 }
            setup.proxies[1].onRelay(nil)
            let listed = try JSONSerialization.jsonObject(with: Data(try a.keyhaven("sync", "devices", "--json").output.utf8)) as? [[String: Any]]
            #expect(listed?.count == 2, "only the device and its recovery key: \(listed ?? [])")
        }
    }

    @Test("A fork: each branch is accepted alone; sync verify shows different fingerprints; a device joining on the other branch, or going back, refuses it")
    func fork() async throws {
        try await Self.withHostile(["left", "right", "third"]) { setup in
            let (a, b, c) = (setup.devices[0], setup.devices[1], setup.devices[2])
            try a.set("shared", "before the fork")
            _ = try Self.pair(setup, count: 2)
            // The server copies its database and shows b the copy from now on.
            let forked = try TestSyncServer(databaseURL: try setup.postgres.copyDatabase(to: "forked"))
            defer { forked.stop() }
            setup.proxies[1].forward(to: forked.url)
            try a.set("left", "only on the left")
            try SyncDevices.syncNow(a)
            for index in 0..<3 { try b.set("right-\(index)", "only on the right") }
            try SyncDevices.syncNow(b)
            // Each device verifies its branch; their fingerprints at one position differ.
            func verify(_ device: TestDevice, at position: Int? = nil) throws -> [String: Any] {
                let result = try device.run(TestDevice.binaries.appendingPathComponent("keyhaven").path,
                                            ["sync", "verify", "--json"] + (position.map { ["--at", "\($0)"] } ?? []))
                #expect(result.status == 0, "\(result.error)")
                return (try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]) ?? [:]
            }
            let left = try verify(a), position = try #require(left["sequence"] as? Int)
            let right = try verify(b, at: position)
            #expect(right["sequence"] as? Int == position)
            #expect(left["fingerprint"] as? String != right["fingerprint"] as? String)
            // Before the fork they agree.
            #expect(try verify(a, at: position - 1)["fingerprint"] as? String == verify(b, at: position - 1)["fingerprint"] as? String)
            // A device invited on the left but shown the right branch refuses to join.
            let branch = try Self.cachedEntries(b)
            setup.proxies[2].onPull { _, batch in
                let after = batch.entries.first.map { $0.sequence - 1 } ?? batch.head.sequence
                return LogBatch(head: branch.last!.head, entries: branch.filter { $0.sequence > after })
            }
            let (invite, output) = try a.start("sync", "invite", "--timeout", "30")
            let code = try SyncDevices.firstLine(output)
            let joined = try c.keyhaven("sync", "join", "--server", setup.proxies[2].url, "--code", code, "--name", "third")
            invite.waitUntilExit()
            #expect(joined.status != 0 && joined.error.contains("(fork detected)"), "\(joined.error)")
            #expect(try c.items().isEmpty)
            // b, shown the left branch again, refuses it: another entry where it verified one.
            setup.proxies[1].forward(to: setup.server.url)
            try Self.expectRefusal(b, "fork detected", "back to the other branch")
        }
    }

    @Test("Heartbeats withheld: sync status warns that the other device is stale, on both sides; not while they come")
    func withheldHeartbeats() async throws {
        try await Self.withHostile(["watcher", "watched"], environment: ["KEYHAVEN_SYNC_HEARTBEAT_SECONDS": "1"]) { setup in
            let (a, b) = (setup.devices[0], setup.devices[1])
            _ = try Self.pair(setup)
            try await Task.sleep(for: .milliseconds(1_200))
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            #expect((try Self.status(a, "--stale-after", "60")["staleDevices"] as? [Any])?.isEmpty == true)
            // The server freezes what a sees of b (a copy of the log, where a's own entries go on).
            let frozen = try TestSyncServer(databaseURL: try setup.postgres.copyDatabase(to: "frozen"))
            defer { frozen.stop() }
            setup.proxies[0].forward(to: frozen.url)
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(1_100))
                try SyncDevices.syncNow(b)
                try SyncDevices.syncNow(a)
            }
            let bID = try #require(try Self.status(b)["device"] as? String)
            let stale = try Self.status(a, "--stale-after", "2")["staleDevices"] as? [[String: Any]]
            #expect(stale?.map { $0["id"] as? String } == [bID])
            #expect(try a.keyhaven("sync", "status", "--stale-after", "2").output.contains("stale device"))
            #expect((try Self.status(b, "--stale-after", "2")["staleDevices"] as? [Any])?.count == 1)
            // A limit no run reaches, however loaded the machine (a full parallel run took this
            // test past 60 s between b's last heartbeat a saw and this check).
            #expect((try Self.status(a, "--stale-after", "3600")["staleDevices"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("Removal rotates the keys: the removed device's keys and a database dump open nothing written after; its forged entries are refused by all")
    func removalRotatesKeys() async throws {
        try await Self.withHostile(["keeper", "other", "lost"]) { setup in
            let (a, b, c) = (setup.devices[0], setup.devices[1], setup.devices[2])
            try a.set("before", "seen by the lost device")
            _ = try Self.pair(setup)
            #expect(try c.items() == ["before": "seen by the lost device"])
            let lost = try Self.state(c)
            let cID = try #require(try Self.status(c)["device"] as? String)
            let removed = try a.keyhaven("sync", "remove-device", cID)
            #expect(removed.status == 0, "\(removed.error)")
            #expect(removed.output.contains("change those passwords"))
            try SyncDevices.syncNow(b)
            #expect(try Self.status(a)["epoch"] as? Int == 2 && Self.status(b)["epoch"] as? Int == 2)
            let canary = "after-removal-" + UUID().uuidString
            try b.set("after", canary)
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            #expect(try a.items()["after"] == canary)
            // Everything the server holds, against every key the removed device kept.
            let entries = try Self.cachedEntries(a)
            let account = try #require(entries.first?.account)
            let identity = try lost.identity()
            var before = 0, after = 0
            for entry in entries {
                switch entry.body {
                case .record(let sealed):
                    let opened = lost.heldViewKeys.contains { (try? sealed.open(viewKey: $0, account: account)) != nil }
                    if entry.keyEpoch >= 2 {
                        #expect(!opened, "a record written after the rotation opens with the removed device's keys")
                        after += 1
                    } else if opened {
                        before += 1
                    }
                case .rotateKeys(let rotation):
                    #expect(rotation.shares.allSatisfy { (try? $0.open(with: identity, account: account)) == nil })
                default:
                    break
                }
            }
            #expect(before > 0 && after > 0, "the check opened what it could before and tried what came after")
            #expect(!(try setup.postgres.dump()).contains(canary))
            // An entry the removed device signs after its removal, slipped in by the server, is refused by every device.
            for (device, proxy) in [(a, setup.proxies[0]), (b, setup.proxies[1])] {
                try device.set("poked", "so there is something to pull")
                try SyncDevices.syncNow(device)
                proxy.onPull { account, batch in
                    let sealed = SealedRecord.seal(Array("forged".utf8), record: RecordID(), syncClass: .c, version: UInt64.max / 2, isDeleted: false,
                                                   viewKey: ViewKey(epoch: 2), account: account)
                    let forged = LogEntry(.record(sealed), account: account, after: batch.head, counter: 1 << 40, epoch: 2, signedBy: identity)
                    return LogBatch(head: forged.head, entries: batch.entries + [forged])
                }
                try Self.expectRefusal(device, "unknown device", "an entry signed by the removed device")
                proxy.onPull(nil)
                try SyncDevices.syncNow(device)
            }
        }
    }

    @Test("During a rotation: a device that wrote under the old epoch seals again and retries; while the rotation is withheld it waits and writes nothing")
    func rotationRaces() async throws {
        try await Self.withHostile(["keeper", "writer", "lost-1", "lost-2"]) { setup in
            let (a, b, c, d) = (setup.devices[0], setup.devices[1], setup.devices[2], setup.devices[3])
            _ = try Self.pair(setup)
            let writer = try #require(try Self.status(b)["device"] as? String)
            // The server hides the removal and its rotation from b once: b seals under epoch 1, its
            // push loses the race, it pulls the rotation, seals again under epoch 2.
            let hidden = Mutex(false)
            setup.proxies[1].onPull { _, batch in
                guard hidden.withLock({ done in defer { done = true }; return !done }) else { return batch }
                var entries = batch.entries
                while let last = entries.last, last.body.isRosterChange { entries.removeLast() }
                return LogBatch(head: entries.last?.head ?? LogHead(sequence: batch.entries[0].sequence - 1, hash: batch.entries[0].previousHash),
                                entries: entries)
            }
            try b.set("racing", "written during the rotation")
            #expect(try a.keyhaven("sync", "remove-device", try #require(try Self.status(c)["device"] as? String)).status == 0)
            try SyncDevices.syncNow(b)
            #expect(hidden.withLock { $0 })
            try SyncDevices.syncNow(a)
            #expect(try a.items()["racing"] == "written during the rotation")
            let racing = try Self.cachedEntries(a).last { $0.device.hex == writer && $0.body.isRecord }
            #expect(racing?.keyEpoch == 2)
            // The server withholds the next rotation (it shows the removal alone): b waits.
            setup.proxies[1].onPull { _, batch in
                guard let last = batch.entries.last, case .rotateKeys = last.body else { return batch }
                return LogBatch(head: batch.entries.dropLast().last?.head ?? LogHead(sequence: last.sequence - 1, hash: last.previousHash),
                                entries: Array(batch.entries.dropLast()))
            }
            #expect(try a.keyhaven("sync", "remove-device", try #require(try Self.status(d)["device"] as? String)).status == 0)
            try b.set("waiting", "not before the new keys")
            let waited = try b.keyhaven("sync", "now")
            #expect(waited.status != 0 && waited.error.contains("(missing key share)"), "\(waited.error)")
            try SyncDevices.syncNow(a)
            #expect(try a.items()["waiting"] == nil)
            setup.proxies[1].onPull(nil)
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            #expect(try a.items()["waiting"] == "not before the new keys")
            #expect(try Self.cachedEntries(a).last { $0.device.hex == writer && $0.body.isRecord }?.keyEpoch == 3)
        }
    }

    @Test("Recovery after every device's home is gone; rotate-recovery-key: the new key works, the old one opens nothing new")
    func recoveryAfterEverythingIsLost() async throws {
        try await Self.withHostile(["phone", "laptop", "replacement", "later"]) { setup in
            let (a, b, d, e) = (setup.devices[0], setup.devices[1], setup.devices[2], setup.devices[3])
            try a.set("kept", "in the account")
            let key = try Self.pair(setup, count: 2)
            try b.set("also", "kept")
            try SyncDevices.syncNow(b)
            for device in [a, b] { try FileManager.default.removeItem(atPath: device.home) }
            let recovered = try d.keyhaven("sync", "recover", "--server", setup.proxies[2].url, "--recovery-key", key, "--name", "replacement")
            #expect(recovered.status == 0, "\(recovered.error)")
            #expect(try d.items() == ["kept": "in the account", "also": "kept"])
            let rotated = try d.keyhaven("sync", "rotate-recovery-key")
            #expect(rotated.status == 0, "\(rotated.error)")
            let newKey = try #require(rotated.output.split(separator: "\n").first { $0.hasPrefix("Recovery key: ") }?.dropFirst("Recovery key: ".count))
            try d.set("after", "the new recovery key")
            try SyncDevices.syncNow(d)
            let refused = try e.keyhaven("sync", "recover", "--server", setup.proxies[3].url, "--recovery-key", key)
            #expect(refused.status != 0 && refused.error.contains("recovery key"), "\(refused.error)")
            // The old key's pseudo-device opens no share and no record written since.
            let old = try #require(RecoveryKey(text: key)).identity()
            let entries = try Self.cachedEntries(d)
            let account = try #require(entries.first?.account)
            var openedBefore = false
            for entry in entries {
                if case .addDevice(let addition) = entry.body, addition.device == old.id,
                   let epochOne = try? addition.share.open(with: old, account: account) {
                    openedBefore = true
                    for later in entries where later.keyEpoch >= 2 {
                        if case .record(let sealed) = later.body { #expect((try? sealed.open(viewKey: epochOne, account: account)) == nil) }
                    }
                }
                if case .rotateKeys(let rotation) = entry.body {
                    #expect(rotation.shares.allSatisfy { (try? $0.open(with: old, account: account)) == nil })
                }
            }
            #expect(openedBefore)
            let again = try e.keyhaven("sync", "recover", "--server", setup.proxies[3].url, "--recovery-key", String(newKey), "--name", "later")
            #expect(again.status == 0, "\(again.error)")
            #expect(try e.items() == ["kept": "in the account", "also": "kept", "after": "the new recovery key"])
        }
    }
}

extension EntryBody {
    var isRosterChange: Bool {
        switch self {
        case .removeDevice, .rotateKeys: true
        default: false
        }
    }
}
