import Foundation
import KeychainAccessCore
import KeychainTestSupport
import Testing

/// The Sync page's summary, read from `keyhaven sync` on a home that syncs through a real server.
@Suite(.serialized)
struct SyncSummaryTests {
    @Test("A home that does not sync says so; two paired devices are listed with this one marked; Sync Now succeeds and then shows when this device last synced")
    func summary() async throws {
        let keyhaven = TestDevice.binaries.appendingPathComponent("keyhaven").path
        let alone = try TestDevice("alone")
        let none = SyncSummary.read(keyhaven: keyhaven, environment: alone.environment)
        #expect(!none.syncing && none.devices.isEmpty && none.problem == nil)
        #expect(!SyncSummary.syncNow(keyhaven: keyhaven, environment: alone.environment).succeeded)

        try await SyncDevices.withDevices(["laptop", "phone"]) { server, _, devices in
            try SyncDevices.pair(devices[0], [devices[1]], server: server)
            try devices[0].set("ada", "s3cret")
            let now = SyncSummary.syncNow(keyhaven: keyhaven, environment: devices[0].environment)
            #expect(now.succeeded && now.message.hasPrefix("In step at"), "\(now.message)")
            let summary = SyncSummary.read(keyhaven: keyhaven, environment: devices[0].environment)
            #expect(summary.syncing && summary.server == server.url && summary.problem == nil, "\(summary)")
            #expect(summary.items == 1)
            #expect(Set(summary.devices.filter { !$0.recoveryKey }.map(\.name)) == ["laptop", "phone"])
            #expect(summary.devices.first(where: \.thisDevice)?.name == "laptop")
            let last = try #require(summary.lastSync)
            #expect(abs(last.timeIntervalSinceNow) < 300)
            #expect(summary.devices.first(where: \.thisDevice)?.line.hasPrefix("laptop (this device, last synced ") == true)
        }
    }
}
