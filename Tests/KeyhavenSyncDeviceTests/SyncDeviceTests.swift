import Foundation
import KeychainModel
import KeychainStore
import KeychainTestSupport
import KeyhavenSyncDevice
import PropertyBased
import Testing

/// Devices syncing through a real server on a real PostgreSQL cluster, each a keychain home of its
/// own driven by the `keyhaven sync` command as a user would.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncDeviceTests {
    @Test("create, invite and join; adds, changes and deletes reach the other device; local items stay local")
    func twoDevices() async throws {
        try await SyncDevices.withDevices(["laptop", "desktop"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.set("alice", "secret-1")
            try a.set("bob", "secret-2")
            try a.set("local", "stays here", synchronizable: false)
            try a.set("device-only", "stays here too", synchronizable: false, accessibility: "aku")
            #expect(try a.keyhaven("sync", "status", "--json").output.contains("\"syncing\":false"))
            try SyncDevices.pair(a, [b], server: server)
            #expect(try b.items() == ["alice": "secret-1", "bob": "secret-2"])
            #expect(try b.items(synchronizable: false).isEmpty)
            // Both ways: an add and a change on b, a delete on a.
            try b.set("carol", "secret-3")
            try b.set("alice", "secret-1b")
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            #expect(try a.items() == ["alice": "secret-1b", "bob": "secret-2", "carol": "secret-3"])
            try a.remove("bob")
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try b.items() == ["alice": "secret-1b", "carol": "secret-3"])
            #expect(try a.items(synchronizable: false) == ["local": "stays here", "device-only": "stays here too"])
            // The contracts: devices as JSON with ids and names; status as one object.
            let listed = try JSONSerialization.jsonObject(with: Data(try a.keyhaven("sync", "devices", "--json").output.utf8)) as? [[String: Any]]
            let names = Set((listed ?? []).compactMap { $0["name"] as? String })
            #expect(names.isSuperset(of: ["laptop", "desktop"]))
            #expect((listed ?? []).allSatisfy { ($0["id"] as? String)?.count == 32 })
            let status = try JSONSerialization.jsonObject(with: Data(try b.keyhaven("sync", "status", "--json").output.utf8)) as? [String: Any]
            #expect(status?["syncing"] as? Bool == true && status?["name"] as? String == "desktop")
            // Leaving: no longer syncing; the items stay.
            #expect(try b.keyhaven("sync", "leave").status == 0)
            #expect(try b.keyhaven("sync", "status", "--json").output.contains("\"syncing\":false"))
            #expect(!SyncMembership.isMember(KeychainHome(path: b.home)))
            #expect(try b.items() == ["alice": "secret-1b", "carol": "secret-3"])
            #expect(try b.keyhaven("sync", "now").status != 0)
        }
    }

    @Test("Secret Service items that share a service and account (each with its discriminator) sync as separate items, and a delete removes only its own")
    func coexistingItemsSync() async throws {
        try await SyncDevices.withDevices(["laptop", "desktop"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.set("twin", "plain")
            let name = SecretServiceAttributes.discriminatorName
            for (discriminator, secret) in [("d1", "first twin"), ("d2", "second twin")] {
                let attributes: [String: AttributeValue] = ["acct": .string("twin"), "svce": .string("sync-test"), "sync": .number(1),
                                                            "pdmn": .string("ak"), "agrp": .string("test.group"), name: .string(discriminator)]
                _ = try a.database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data(secret.utf8)),
                                       caller: TestDevice.caller)
            }
            func twins(_ device: TestDevice) throws -> [String] {
                var query = ItemQuery(itemClass: .genericPassword)
                query.criteria = ["acct": .string("twin"), "sync": .number(1)]
                query.limit = nil
                return try device.database.find(query, caller: TestDevice.caller, withSecrets: true)
                    .map { String(decoding: $0.secret ?? Data(), as: UTF8.self) }.sorted()
            }
            #expect(try twins(a) == ["first twin", "plain", "second twin"])
            try SyncDevices.pair(a, [b], server: server)
            #expect(try twins(b) == ["first twin", "plain", "second twin"])
            var query = ItemQuery(itemClass: .genericPassword)
            query.criteria = ["acct": .string("twin"), "sync": .number(1), name: .string("d1")]
            #expect(try a.database.delete(query, caller: TestDevice.caller, makeTombstones: true) == 1)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try twins(b) == ["plain", "second twin"])
        }
    }

    @Test("A synchronizable ThisDeviceOnly item (KeychainAccess's testAllKeys adds one) stays on its device through every round")
    func synchronizableDeviceOnlyStays() async throws {
        try await SyncDevices.withDevices(["laptop", "desktop"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.set("shared", "goes")
            for accessibility in ["aku", "cku", "dku"] { try a.set("device-\(accessibility)", "stays", accessibility: accessibility) }
            try SyncDevices.pair(a, [b], server: server)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try b.items() == ["shared": "goes"])
            try a.set("device-aku", "changed")
            try b.set("shared", "changed on b")
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try b.items() == ["shared": "changed on b"])
            #expect(try a.items() == ["shared": "changed on b", "device-aku": "changed", "device-cku": "stays", "device-dku": "stays"])
        }
    }

    @Test("recover: a machine that lost everything gets the items back with the recovery key; an unknown key gets nothing")
    func recoverWithKey() async throws {
        try await SyncDevices.withDevices(["original", "replacement"]) { server, _, devices in
            let (a, c) = (devices[0], devices[1])
            try a.set("kept", "in the account")
            let created = try a.keyhaven("sync", "create", "--server", server.url, "--name", "original")
            let key = try #require(created.output.split(separator: "\n").first { $0.hasPrefix("Recovery key: ") }?.dropFirst("Recovery key: ".count))
            let unknown = try c.keyhaven("sync", "recover", "--server", server.url, "--recovery-key", String(repeating: "A", count: 52))
            #expect(unknown.status != 0 && unknown.error.contains("recovery key"))
            #expect(try c.keyhaven("sync", "recover", "--server", server.url, "--recovery-key", "not a key").status != 0)
            let recovered = try c.keyhaven("sync", "recover", "--server", server.url, "--recovery-key", String(key).lowercased(), "--name", "replacement")
            #expect(recovered.status == 0, "\(recovered.error)")
            #expect(try c.items() == ["kept": "in the account"])
            try c.set("new", "from the replacement")
            try SyncDevices.syncNow(c)
            try SyncDevices.syncNow(a)
            #expect(try a.items() == ["kept": "in the account", "new": "from the replacement"])
            let listed = try JSONSerialization.jsonObject(with: Data(try a.keyhaven("sync", "devices", "--json").output.utf8)) as? [[String: Any]]
            let recoveryID = listed?.first { $0["recoveryKey"] as? Bool == true }?["id"] as? String
            #expect(recoveryID != nil && listed?.first { $0["name"] as? String == "replacement" }?["addedBy"] as? String == recoveryID)
        }
    }

    @Test("A device offline for 1,500 changes catches up")
    func longOffline() async throws {
        try await SyncDevices.withDevices(["busy", "away"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            for round in 0..<3 {
                for index in 0..<500 { try a.set("item-\(index)", "round \(round)") }
                try SyncDevices.syncNow(a)
            }
            // On a terminal (script(1) gives it one) the catch-up shows its progress on one line.
            let keyhaven = TestDevice.binaries.appendingPathComponent("keyhaven").path
            let environment = b.environment.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let terminal = try b.run("/usr/bin/script", ["-q", "-e", "-c", "env \(environment) \(keyhaven) sync now", "/dev/null"])
            #expect(terminal.status == 0, "\(terminal.output)")
            #expect(terminal.output.contains("entries pulled") && terminal.output.contains("\r"), "\(terminal.output)")
            let items = try b.items()
            #expect(items.count == 500 && items.values.allSatisfy { $0 == "round 2" })
            #expect(try b.keyhaven("sync", "status", "--json").output.contains("\"items\":500"))
            // Not on a terminal: plain lines only.
            for index in 0..<300 { try a.set("item-\(index)", "round 3") }
            try SyncDevices.syncNow(a)
            let piped = try b.keyhaven("sync", "now")
            #expect(piped.status == 0 && !piped.output.contains("\r") && !piped.output.contains("left"))
        }
    }

    @Test("SIGKILL of the client or the server in the middle of a sync: nothing lost, nothing doubled; the next sync converges")
    func killedDuringSync() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let port = try TestPostgres.freePort()
        var server = try TestSyncServer(databaseURL: postgres.url, port: port)
        let (a, b) = (try TestDevice("writer"), try TestDevice("reader"))
        try SyncDevices.pair(a, [b], server: server)
        var generator = SeededGenerator(seed: UInt64.random(in: 0...UInt64.max))
        var expected: [String: String] = [:]
        for round in 0..<6 {
            for index in 0..<60 {
                let value = "round \(round) value \(index)"
                try a.set("item-\(index)", value)
                expected["item-\(index)"] = value
            }
            let (process, _) = try a.start("sync", "now")
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...400, using: &generator)))
            if round % 2 == 0 {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            } else {
                server.stop(kill: true)
                process.waitUntilExit()
                server = try TestSyncServer(databaseURL: postgres.url, port: port)
            }
        }
        try SyncDevices.syncNow(a)
        try SyncDevices.syncNow(b)
        let (mine, theirs) = (try a.items(), try b.items())
        #expect(mine == expected, "seed \(generator.seed): differs at \(expected.filter { mine[$0.key] != $0.value }.keys.sorted())")
        #expect(theirs == expected, "seed \(generator.seed): differs at \(expected.filter { theirs[$0.key] != $0.value }.keys.sorted())")
        server.stop()
    }

    @Test("With the agents running, a change on one device reaches the other by itself: no sync now")
    func backgroundSync() async throws {
        try await SyncDevices.withDevices(["left", "right"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            try Self.startAgents(devices)
            try a.set("live", "v1")
            try await Self.eventually("an add seen on the other device") { try b.items()["live"] == "v1" }
            try a.set("live", "v2")
            try await Self.eventually("a change seen on the other device") { try b.items()["live"] == "v2" }
            try b.remove("live")
            try await Self.eventually("a delete seen on the first device") { try a.items()["live"] == nil }
            for device in devices { #expect(try device.keyhaven("agent", "stop").status == 0) }
        }
    }

    @Test("A locked keychain: the agent syncs the classes it can read, the WhenUnlocked items wait for the unlock; nothing is deleted meanwhile; sync now, status and devices go through the agent, with no password asked")
    func lockedClassesWait() async throws {
        try await SyncDevices.withDevices(["open", "locked"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.set("held", "before", accessibility: "ak")
            try SyncDevices.pair(a, [b], server: server)
            #expect(try b.items() == ["held": "before"])
            // b gets a password; its agent is unlocked once (AfterFirstUnlock keys stay), then locked.
            #expect(try b.keyhaven("set-keychain-password", "-o", "", "-p", "pw").status == 0)
            b.usesAgent = true
            #expect(try b.keyhaven("agent", "start").status == 0)
            #expect(try b.keyhaven("unlock-keychain", "-p", "pw").status == 0)
            #expect(try b.keyhaven("lock-keychain").status == 0)
            try b.database.unlock(password: Array("pw".utf8))
            try a.set("later", "after first unlock", accessibility: "ck")
            try a.set("when-unlocked", "waits", accessibility: "ak")
            try SyncDevices.syncNow(a)
            try await Self.eventually("the AfterFirstUnlock item while locked") { try b.items()["later"] == "after first unlock" }
            #expect(try b.items()["when-unlocked"] == nil)
            #expect(try b.keyhaven("unlock-keychain", "-p", "pw").status == 0)
            try await Self.eventually("the WhenUnlocked item after the unlock") { try b.items()["when-unlocked"] == "waits" }
            try SyncDevices.syncNow(a)
            #expect(try a.items() == ["held": "before", "later": "after first unlock", "when-unlocked": "waits"])
            // With the agent running, `sync now`, `status` and `devices` ask it: the keychain it holds
            // unlocked needs no password, on no terminal.
            try a.set("through the agent", "v1")
            try SyncDevices.syncNow(a)
            let round = try b.keyhaven("sync", "now")
            #expect(round.status == 0 && round.output.hasPrefix("In step at "), "\(round)")
            #expect(try b.items()["through the agent"] == "v1")
            let agentStatus = try b.keyhaven("sync", "status", "--json")
            #expect(agentStatus.status == 0 && agentStatus.output.contains("\"syncing\":true") && agentStatus.output.contains("\"items\":4"),
                    "\(agentStatus)")
            let devices = try b.keyhaven("sync", "devices", "--json")
            #expect(devices.status == 0 && devices.output.contains("\"thisDevice\":true") && devices.output.contains("\"name\":\"open\""), "\(devices)")
            #expect(try b.keyhaven("agent", "stop").status == 0)
            // Without it, `keyhaven sync` opens the keychain itself: without a terminal it says it is locked;
            // on one (script(1) gives it one) it asks for the password, without echo.
            let locked = try b.keyhaven("sync", "status")
            #expect(locked.status == 36 && locked.error.contains("locked"))
            let keyhaven = TestDevice.binaries.appendingPathComponent("keyhaven").path
            let environment = b.environment.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let process = Process(), input = Pipe(), output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-q", "-e", "-c", "env \(environment) \(keyhaven) sync status", "/dev/null"]
            (process.standardInput, process.standardOutput, process.standardError) = (input, output, output)
            try process.run()
            var seen = ""
            while !seen.contains("password to unlock the default keychain: "), let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
                seen += String(decoding: byte, as: UTF8.self)
            }
            input.fileHandleForWriting.write(Data("pw\n".utf8))
            seen += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0 && seen.contains("Syncing with"), "\(seen)")
            #expect(!seen.contains("pw"), "the password is not echoed")
        }
    }

    /// Starts each device's agent (which then syncs in the background), with `environment`.
    static func startAgents(_ devices: [TestDevice], environment: [String: String] = [:]) throws {
        for device in devices {
            device.extraEnvironment = environment
            device.usesAgent = true
            #expect(try device.keyhaven("agent", "start").status == 0)
        }
    }

    /// Waits up to `limit` for `condition`, polling; records an issue if it never holds.
    static func eventually(_ what: String, within limit: Duration = .seconds(45), _ condition: () throws -> Bool) async throws {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if try condition() {
                print("sync: \(what) after \(ContinuousClock.now - start)")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("\(what): not within \(limit)")
    }

    @Test("With the agents running, a change made after several empty long polls still reaches the other device at once")
    func pollsFollowOneAnother() async throws {
        try await SyncDevices.withDevices(["early", "idle"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            // Long polls of 1 s: the 4 s of quiet below end four of them empty. (A poll that ended
            // empty once left the device deaf to the server until its round's 60 s timer.)
            try Self.startAgents(devices, environment: ["KEYHAVEN_SYNC_LONG_POLL_SECONDS": "1"])
            try a.set("first", "v1")
            try await Self.eventually("the first add seen on the other device") { try b.items()["first"] == "v1" }
            try await Task.sleep(for: .seconds(4))
            try a.set("later", "v1")
            // The timer would take 50 s and more; a poll answers within a second or two.
            try await Self.eventually("an add after the quiet seen on the other device", within: .seconds(30)) { try b.items()["later"] == "v1" }
            for device in devices { #expect(try device.keyhaven("agent", "stop").status == 0) }
        }
    }

    @Test("With the agents running, the server down for a few seconds: once it is back, a change reaches the other device without waiting out the minute")
    func pollsResumeAfterAnError() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let port = try TestPostgres.freePort()
        var server = try TestSyncServer(databaseURL: postgres.url, port: port)
        defer { server.stop() }
        let (a, b) = (try TestDevice("writer"), try TestDevice("listener"))
        try SyncDevices.pair(a, [b], server: server)
        try Self.startAgents([a, b], environment: ["KEYHAVEN_SYNC_LONG_POLL_SECONDS": "2"])
        try a.set("first", "v1")
        try await Self.eventually("the first add seen on the other device") { try b.items()["first"] == "v1" }
        // The listener settles into its long polls (the round that applied the add is followed by
        // one more, for its own writes). Then its poll fails while the server is down: it must
        // poll again soon after, not wait out its round's 60 s timer.
        try await Task.sleep(for: .seconds(3))
        server.stop(kill: true)
        try await Task.sleep(for: .seconds(3))
        server = try TestSyncServer(databaseURL: postgres.url, port: port)
        try a.set("later", "v1")
        // The writer's own round backs off for a few seconds at most; the listener's next poll
        // follows within 4 s. The timer would take 55 s and more.
        try await Self.eventually("an add after the restart seen on the other device", within: .seconds(30)) { try b.items()["later"] == "v1" }
        for device in [a, b] { #expect(try device.keyhaven("agent", "stop").status == 0) }
    }

    @Test("Two devices create the same items offline: the later value wins everywhere, whichever record id survives")
    func sameItemsCreatedTwice() async throws {
        try await SyncDevices.withDevices(["early", "late"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            // Twelve items, each created on both devices: twelve coin tosses of which record id is lower.
            for index in 0..<12 { try a.set("twice-\(index)", "older") }
            try await Task.sleep(for: .milliseconds(20))
            for index in 0..<12 { try b.set("twice-\(index)", "newer") }
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            let expected = Dictionary(uniqueKeysWithValues: (0..<12).map { ("twice-\($0)", "newer") })
            #expect(try a.items() == expected)
            #expect(try b.items() == expected)
        }
    }

    @Test("Every class the keychain stores syncs with every attribute: generic and internet passwords, keys, certificates")
    func everyClassWithEveryAttribute() async throws {
        try await SyncDevices.withDevices(["source", "copy"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            var generator = SeededGenerator(seed: 13)
            var added: [ItemClass: NewItem] = [:]
            for itemClass in ItemClass.allCases {
                var attributes: [String: AttributeValue] = [:]
                for descriptor in itemClass.schema.attributes where !Self.attributesNotRandom.contains(descriptor.name) {
                    attributes[descriptor.name] = Self.someValue(descriptor.kind, &generator)
                }
                attributes["agrp"] = .string("test.group")
                attributes["pdmn"] = .string("ck")
                attributes["sync"] = .number(1)
                let secret = Data((0..<48).map { _ in UInt8.random(in: 0...255, using: &generator) })
                let item = NewItem(itemClass: itemClass, attributes: attributes, secret: secret)
                _ = try a.database.add(item, caller: TestDevice.caller)
                added[itemClass] = item
            }
            try SyncDevices.pair(a, [b], server: server)
            for (itemClass, item) in added {
                var query = ItemQuery(itemClass: itemClass)
                query.criteria = ["sync": .number(1), "agrp": .string("test.group")]
                query.limit = nil
                let found = try b.database.find(query, caller: TestDevice.caller, withSecrets: true)
                let original = try #require(try a.database.find(query, caller: TestDevice.caller, withSecrets: true).first)
                #expect(found.count == 1, "\(itemClass)")
                guard let copy = found.first else { continue }
                #expect(copy.secret == item.secret, "\(itemClass): the secret")
                for (name, value) in item.attributes where name != "cdat" && name != "mdat" {
                    #expect(copy.attributes[name] == value, "\(itemClass): \(name)")
                }
                // The dates are the original's (set when it was added there), not the copy's own.
                #expect(copy.attributes == original.attributes, "\(itemClass)")
            }
            // A change to a key's attribute travels too.
            var query = ItemQuery(itemClass: .key)
            query.criteria = ["sync": .number(1)]
            var changes = ItemChanges()
            changes.attributes = ["labl": .string("renamed key")]
            _ = try a.database.update(query, with: changes, caller: TestDevice.caller)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try b.database.find(query, caller: TestDevice.caller, withSecrets: false).first?.attributes["labl"] == .string("renamed key"))
        }
    }

    /// The attributes the test does not set at random: derived (`sha1`), set by the test, or hidden bookkeeping.
    static let attributesNotRandom: Set<String> = ["sha1", "agrp", "pdmn", "sync", "vwht", "tkid", "ggrp"]

    /// A random value of `kind`, as a keychain stores it.
    static func someValue(_ kind: AttributeKind, _ generator: inout SeededGenerator) -> AttributeValue {
        let bytes = Data((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) })
        switch kind {
        case .blob: return Bool.random(using: &generator) ? .data(bytes) : .string("v-\(bytes.base64EncodedString())")
        case .data: return .data(bytes)
        case .string: return .string("s-\(bytes.base64EncodedString())")
        case .number: return .number(Int64.random(in: 1...1_000_000, using: &generator))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 1...700_000_000, using: &generator))))
        }
    }

    @Test("remove-device: the removed device can no longer pull or push and says so; the others go on; its items stay")
    func removeDevice() async throws {
        try await SyncDevices.withDevices(["keeper", "other", "lost"]) { server, _, devices in
            let (a, b, c) = (devices[0], devices[1], devices[2])
            try a.set("shared", "before")
            try SyncDevices.pair(a, [b, c], server: server)
            #expect(try c.items() == ["shared": "before"])
            let listed = try JSONSerialization.jsonObject(with: Data(try a.keyhaven("sync", "devices", "--json").output.utf8)) as? [[String: Any]]
            let lost = try #require(listed?.first { $0["name"] as? String == "lost" }?["id"] as? String)
            let mine = try #require(listed?.first { $0["name"] as? String == "keeper" }?["id"] as? String)
            #expect(try a.keyhaven("sync", "remove-device", mine).status != 0)
            #expect(try a.keyhaven("sync", "remove-device", "00000000000000000000000000000000").status != 0)
            let removed = try a.keyhaven("sync", "remove-device", lost)
            #expect(removed.status == 0, "\(removed.error)")
            try c.set("shared", "written after removal")
            let refused = try c.keyhaven("sync", "now")
            #expect(refused.status != 0 && refused.error.contains("removed"))
            #expect(try c.keyhaven("sync", "status").output.contains("removed"))
            #expect(try c.items() == ["shared": "written after removal"])
            try b.set("shared", "after")
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            #expect(try a.items() == ["shared": "after"])
            let after = try JSONSerialization.jsonObject(with: Data(try a.keyhaven("sync", "devices", "--json").output.utf8)) as? [[String: Any]]
            #expect(after?.first { $0["id"] as? String == lost }?["active"] as? Bool == false)
        }
    }

    @Test("Three devices editing the same items offline, synced in random orders, end with the same items (property-based)")
    func threeDevicesConverge() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url)
        defer { server.stop() }
        // A schedule: rounds of offline edits (device, item, operation, value), each round followed
        // by every device syncing in an order the round's last number picks. Two schedules a run
        // (KEYHAVEN_SYNC_SCHEDULES for more); a failing one is shrunk and printed.
        let edit = Gen.int(in: 0...999).array(of: 4...4)
        let round = edit.array(of: 3...10)
        let schedules = Int(ProcessInfo.processInfo.environment["KEYHAVEN_SYNC_SCHEDULES"] ?? "") ?? 2
        await propertyCheck(count: schedules, input: round.array(of: 1...3)) { rounds in
            do {
                let devices = try ["one", "two", "three"].map(TestDevice.init)
                try SyncDevices.pair(devices[0], Array(devices.dropFirst()), server: server)
                for (number, edits) in rounds.enumerated() {
                    for step in edits {
                        let (device, account) = (devices[step[0] % 3], "item-\(step[1] % 6)")
                        if step[2] % 4 == 0 {
                            try? device.remove(account)
                        } else {
                            try device.set(account, "\(device.name)-\(number)-\(step[3])")
                        }
                    }
                    var order = SeededGenerator(seed: UInt64(edits.last?[3] ?? 0))
                    for device in devices.shuffled(using: &order) { try SyncDevices.syncNow(device) }
                }
                // One more pass brings everyone to the last head.
                for device in devices { try SyncDevices.syncNow(device) }
                let contents = try devices.map { try $0.items() }
                #expect(contents[0] == contents[1] && contents[1] == contents[2], "\(contents)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test("The database and the server's logs hold none of 64 canaries placed in attributes and secrets (raw, hex, base64)")
    func noCanaryReachesTheServer() async throws {
        try await SyncDevices.withDevices(["canary"]) { server, postgres, devices in
            let device = devices[0]
            let canaries = (0..<64).map { _ in "canary-\(UUID().uuidString)" }
            for index in stride(from: 0, to: canaries.count, by: 4) {
                try device.set(canaries[index], canaries[index + 1], service: canaries[index + 2],
                               extra: ["labl": .string(canaries[index + 3]), "desc": .string(canaries[index + 3]), "gena": .data(Data(canaries[index].utf8))])
            }
            try SyncDevices.pair(device, [], server: server)
            try SyncDevices.syncNow(device)
            let status = try JSONSerialization.jsonObject(with: Data(try device.keyhaven("sync", "status", "--json").output.utf8)) as? [String: Any]
            #expect(status?["items"] as? Int == 16)
            let text = try postgres.dump() + server.output
            for canary in canaries {
                for form in [canary, Data(canary.utf8).map { String(format: "%02x", $0) }.joined(), Data(canary.utf8).base64EncodedString()] {
                    #expect(!text.contains(String(form.prefix(24))))
                }
            }
        }
    }

    @Test("A log the server changed is refused with a message and changes nothing; once the true log is back, sync now succeeds")
    func refusalDoesNotStick() async throws {
        try await SyncDevices.withDevices(["honest", "victim"]) { server, postgres, devices in
            let (a, b) = (devices[0], devices[1])
            try a.set("first", "one")
            try SyncDevices.pair(a, [b], server: server)
            try a.set("second", "two")
            try SyncDevices.syncNow(a)
            // Flip one bit of the newest entry in the database, as a hostile server could.
            let flip = "UPDATE keyhaven_entries SET entry = set_byte(entry, 120, get_byte(entry, 120) # 1) "
                + "WHERE seq = (SELECT max(seq) FROM keyhaven_entries)"
            #expect(try postgres.sql(flip) == 0)
            let refused = try b.keyhaven("sync", "now")
            #expect(refused.status == 93 && refused.error.contains("refused"), "\(refused)")
            #expect(try b.items() == ["first": "one"])
            #expect(try postgres.sql(flip) == 0)
            try SyncDevices.syncNow(b)
            #expect(try b.items() == ["first": "one", "second": "two"])
        }
    }

    #if DEBUG
    @Test("A full disk under the device's keychain at any point of a round: the round fails or completes, nothing is lost, the next converges")
    func fullDiskDuringRound() async throws {
        try await SyncDevices.withDevices(["full", "source"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            try SQLiteFaults.install()
            // The faults are armed for the whole process: no other test that arms them (the
            // reliability suite's, which hold this lock) may run meanwhile.
            let (failed, completed) = try await ProcessWideTestLock.withLock { () async throws -> (Int, Int) in
                var (failed, completed) = (0, 0)
                for skip in [0, 3, 10, 25, 50, 100, 200, 400, 800, 1600] {
                    for index in 0..<4 { try b.set("item-\(index)", "skip \(skip)") }
                    try SyncDevices.syncNow(b)
                    try a.set("local-\(skip)", "mine")
                    // The round in this process, on a connection of its own that goes through the faults.
                    let home = KeychainHome(path: a.home)
                    let database = try KeychainRegistry().database(at: home.defaultKeychainPath, home: home, create: false)
                    SQLiteFaults.arm([.write, .sync], under: a.home, skip: skip, failure: .diskFull)
                    do {
                        _ = try await SyncEngine(database: database, home: home).syncNow()
                        completed += 1
                    } catch {
                        failed += 1
                    }
                    SQLiteFaults.disarm()
                    try SyncDevices.syncNow(a)
                    try SyncDevices.syncNow(b)
                    try SyncDevices.syncNow(a)
                    let (mine, theirs) = (try a.items(), try b.items())
                    #expect(mine == theirs && mine["local-\(skip)"] == "mine" && mine["item-0"] == "skip \(skip)", "skip \(skip)")
                }
                return (failed, completed)
            }
            print("reliability: sync with a full disk: \(failed) rounds failed cleanly, \(completed) completed")
            #expect(failed > 0 && completed > 0)
        }
    }
    #endif

    @Test("PostgreSQL reporting a full disk (SQLSTATE 53100) on a push: 503, nothing changes, the device says so; once it has room, the next sync converges")
    func databaseFull() async throws {
        try await SyncDevices.withDevices(["pusher", "puller"]) { server, postgres, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            try a.set("waiting", "for room")
            // Every insert of an entry fails as a full disk makes it fail.
            #expect(try postgres.sql("""
                CREATE FUNCTION keyhaven_test_full() RETURNS trigger AS $$ BEGIN
                RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END $$ LANGUAGE plpgsql;
                CREATE TRIGGER keyhaven_test_full BEFORE INSERT ON keyhaven_entries FOR EACH ROW EXECUTE FUNCTION keyhaven_test_full();
                """) == 0)
            let full = try a.keyhaven("sync", "now")
            #expect(full.status != 0 && full.error.contains("database failed"), "\(full)")
            try SyncDevices.syncNow(b)
            #expect(try b.items().isEmpty)
            #expect(try a.items() == ["waiting": "for room"])
            #expect(try postgres.sql("DROP TRIGGER keyhaven_test_full ON keyhaven_entries") == 0)
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            #expect(try b.items() == ["waiting": "for room"])
        }
    }
}
