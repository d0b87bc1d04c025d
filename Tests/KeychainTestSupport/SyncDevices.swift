import Foundation
import Testing

/// Devices syncing through a server of the test's own, driven by `keyhaven sync` as a user would:
/// the set-ups the sync tests share.
package enum SyncDevices {
    /// A cluster, a server and devices for `body`.
    package static func withDevices(_ names: [String], _ body: (TestSyncServer, TestPostgres, [TestDevice]) async throws -> Void) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let server = try TestSyncServer(databaseURL: postgres.url)
        defer { server.stop() }
        try await body(server, postgres, try names.map(TestDevice.init))
    }

    /// `first` creates the account; each of `others` joins it through `invite` and `join`.
    package static func pair(_ first: TestDevice, _ others: [TestDevice], server: TestSyncServer) throws {
        let created = try first.keyhaven("sync", "create", "--server", server.url, "--name", first.name)
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.split(separator: "\n").contains { $0.hasPrefix("Recovery key: ") && $0.count == "Recovery key: ".count + 64 })
        for other in others {
            let (invite, output) = try first.start("sync", "invite", "--timeout", "60")
            let code = try Self.firstLine(output)
            let joined = try other.keyhaven("sync", "join", "--server", server.url, "--code", code, "--name", other.name)
            #expect(joined.status == 0, "\(joined.error)")
            invite.waitUntilExit()
            #expect(invite.terminationStatus == 0)
        }
    }

    /// The first line a process writes, read as it comes (the invite goes on waiting after it).
    package static func firstLine(_ handle: FileHandle) throws -> String {
        var bytes: [UInt8] = []
        while true {
            let chunk = try handle.read(upToCount: 1) ?? Data()
            guard let byte = chunk.first else { break }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func syncNow(_ device: TestDevice) throws {
        let result = try device.keyhaven("sync", "now")
        #expect(result.status == 0, "\(device.name): \(result.error)")
    }
}
