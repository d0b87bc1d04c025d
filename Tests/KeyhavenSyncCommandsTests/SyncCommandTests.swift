import Foundation
import KeychainTestSupport
import Testing

/// The `keyhaven sync` subcommands as a user meets them: their messages, exit statuses and
/// output when the server, the code or the account is not what they need.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs PostgreSQL's server binaries (scripts/bootstrap installs them)"))
struct SyncCommandTests {
    @Test("With the server down, sync now fails at once with a message; once it is back, the next sync now succeeds")
    func serverDown() async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let port = try TestPostgres.freePort()
        var server: TestSyncServer? = try TestSyncServer(databaseURL: postgres.url, port: port)
        let device = try TestDevice("offline")
        try SyncDevices.pair(device, [], server: server!)
        try device.set("kept", "while offline")
        server?.stop()
        server = nil
        let failed = try device.keyhaven("sync", "now")
        #expect(failed.status != 0 && failed.error.contains("could not be reached"))
        #expect(try device.items() == ["kept": "while offline"])
        server = try TestSyncServer(databaseURL: postgres.url, port: port)
        try SyncDevices.syncNow(device)
        #expect(try device.keyhaven("sync", "status", "--json").output.contains("\"items\":1"))
        server?.stop()
    }

    @Test("invite gives up after its timeout with a message; join refuses a malformed code")
    func pairingFailures() async throws {
        try await SyncDevices.withDevices(["inviter", "joiner"]) { server, _, devices in
            #expect(try devices[0].keyhaven("sync", "invite", "--timeout", "1").status != 0)
            try SyncDevices.pair(devices[0], [], server: server)
            let timedOut = try devices[0].keyhaven("sync", "invite", "--timeout", "2")
            #expect(timedOut.status != 0 && timedOut.error.contains("within 2 seconds"))
            #expect(timedOut.output.split(separator: "\n").first?.filter { $0 != "-" }.count == 32)
            let bad = try devices[1].keyhaven("sync", "join", "--server", server.url, "--code", "not-a-code")
            #expect(bad.status != 0 && bad.error.contains("not a pairing code"))
        }
    }
}

/// The subcommands on a keychain home that does not sync: no server is asked.
@Suite("The sync subcommands before an account")
struct NotSyncingTests {
    @Test("status says how to start (exit 0, and `syncing: false` in JSON); now, invite, verify and devices fail with errSecItemNotFound's status and say why, with nothing on standard output")
    func beforeAnAccount() throws {
        let device = try TestDevice("alone")
        let status = try device.keyhaven("sync", "status")
        #expect(status.status == 0)
        #expect(status.output.hasPrefix("Not syncing: `keyhaven sync create --server URL` or `keyhaven sync join`"))
        let json = try device.keyhaven("sync", "status", "--json")
        #expect(json.status == 0 && json.output == "{\"syncing\":false}\n")
        for command in ["now", "invite", "verify", "devices"] {
            let result = try device.keyhaven("sync", command)
            // The exit status is the OSStatus's low byte, as keyhaven's other subcommands: -25300 & 0xFF.
            #expect(result.status == 44, "\(command)")
            #expect(result.output.isEmpty, "\(command)")
            #expect(result.error.hasPrefix("keyhaven: sync \(command): this keychain home does not sync"), "\(command): \(result.error)")
        }
        #expect(try device.items().isEmpty)
    }
}
