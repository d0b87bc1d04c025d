import Foundation
import KeychainModel
import KeychainStore
import KeychainTestSupport
import KeyhavenSyncDevice
import Synchronization
import Testing

/// A program's write to the keychain while a round of sync runs on it.
extension SyncDeviceTests {
    @Test("A change made here while a round runs is kept and synced after, never overwritten with the older version")
    func changeDuringRound() async throws {
        try await SyncDevices.withDevices(["busy", "other"]) { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            try SyncDevices.pair(a, [b], server: server)
            try a.set("edited", "v1")
            try a.set("zzzzzzzz", "v1")
            try SyncDevices.syncNow(a)
            try SyncDevices.syncNow(b)
            // After the round read the items, before it applies the merge (the agent's rounds
            // raced a program's update this way and wrote the older version back over it).
            try await Self.round(of: b, changingAt: .pulling) { try b.set("edited", "during the pull") }
            #expect(try b.items()["edited"] == "during the pull")
            // Between the read of an item the merge rewrites and the write: a remote change, and
            // here a later one. 150 items first, so the 100th item applied comes before it.
            for index in 0..<150 { try a.set("item-\(String(format: "%03d", index))", "new") }
            try a.set("zzzzzzzz", "remote")
            try SyncDevices.syncNow(a)
            try await Self.round(of: b, changingAt: .applying) { try b.set("zzzzzzzz", "during the apply") }
            #expect(try b.items()["zzzzzzzz"] == "during the apply")
            #expect(try b.items()["item-149"] == "new")
            // The next rounds take both changes in, everywhere.
            try SyncDevices.syncNow(b)
            try SyncDevices.syncNow(a)
            let (mine, theirs) = (try a.items(), try b.items())
            #expect(mine == theirs)
            #expect(mine["edited"] == "during the pull" && mine["zzzzzzzz"] == "during the apply")
        }
    }

    /// One round of `device`'s in this process, on a connection of its own, that runs `change`
    /// at its first report of `phase`.
    static func round(of device: TestDevice, changingAt phase: SyncProgress.Phase,
                      _ change: @escaping @Sendable () throws -> Void) async throws {
        let home = KeychainHome(path: device.home)
        let database = try KeychainRegistry().database(at: home.defaultKeychainPath, home: home, create: false)
        let done = OnceFlag()
        let engine = SyncEngine(database: database, home: home) { progress in
            guard progress.phase == phase, done.claim() else { return }
            #expect(throws: Never.self) { try change() }
        }
        _ = try await engine.syncNow()
        #expect(done.claimed, "the round never reported \(phase)")
    }
}

/// True for the first caller of `claim` only.
final class OnceFlag: Sendable {
    private let state = Atomic<Bool>(false)

    func claim() -> Bool { !state.exchange(true, ordering: .acquiringAndReleasing) }

    var claimed: Bool { state.load(ordering: .acquiring) }
}
