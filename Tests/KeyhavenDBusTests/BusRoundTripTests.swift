import Foundation
import KeychainModel
import KeychainTestSupport
import KeyhavenDBus
import Synchronization
import Testing

/// The D-Bus binding against a real dbus-daemon of the test's own: every kind of value through a
/// call and back, errors, well-known names, clients appearing with their process, and a served
/// connection that stops and frees its name.
@Suite(.serialized)
struct BusRoundTripTests {
    static var hasDaemon: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") }

    /// A private session bus for one test: its address, and how to stop it.
    final class PrivateBus: Sendable {
        let address: String
        private let process: Process
        private let folder: String

        init() throws {
            folder = try TemporaryFolder.make(prefix: "keyhaven-bus")
            let process = Process(), output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            process.arguments = ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(folder)/bus", "--print-address=1"]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var line: [UInt8] = []
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
            self.process = process
            address = String(decoding: line, as: UTF8.self)
        }

        func stop() {
            // SIGKILL: the daemon inherits the test thread's blocked signals, SIGTERM among them.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// A connection serving `/org/keyhaven/test` on its own thread: `Echo` answers its arguments,
    /// `Fail` a D-Bus error; who appeared is recorded.
    final class Server: Sendable {
        /// The clients seen appearing: unique name, process id.
        final class Seen: Sendable {
            let clients = Mutex<[String: Int32]>([:])
        }

        let connection: BusConnection
        let appeared = Seen()
        private let done = DispatchSemaphore(value: 0)

        init(address: String, name: String) throws {
            connection = try BusConnection(address: address)
            #expect(try connection.claim(name))
            try connection.serve("/org/keyhaven/test", onCall: { call in
                if call.member == "Fail" {
                    call.fail(BusError("org.keyhaven.Error.Refused", "refused as asked"))
                } else {
                    call.reply(call.arguments ?? [], sensitive: true)
                }
            }, onClientAppeared: { [appeared] name, pid in appeared.clients.withLock { $0[name] = pid } }, onClientGone: { _ in })
            let (connection, done) = (connection, done)
            Thread { connection.run(); done.signal() }.start()
        }

        func stop() {
            connection.stop()
            done.wait()
        }
    }

    static let name = "org.keyhaven.Test"

    @Test("Every kind of value goes through a call and comes back the same, a secret's bytes included")
    func everyKindRoundTrips() throws {
        try #require(Self.hasDaemon, "scripts/bootstrap installs dbus")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Server(address: bus.address, name: Self.name)
        defer { server.stop() }
        let client = try BusConnection(address: bus.address)
        let values: [BusValue] = [
            .byte(255), .bool(true), .int32(-7), .uint32(7), .int64(Int64.min), .uint64(UInt64.max), .double(0.5),
            .string("ünïcödé ✓"), .objectPath("/org/keyhaven/test/item"), .signature("a{sv}"), .bytes([0, 1, 254, 255]), .bytes([]),
            .array(element: "s", [.string("a"), .string("b")]), .array(element: "o", []),
            .dictionary(key: "s", value: "v", [BusValue.Pair(.string("Label"), .variant(.string("x"))),
                                               BusValue.Pair(.string("Locked"), .variant(.bool(false)))]),
            .structure([.objectPath("/s"), .bytes([1]), .bytes([2, 3]), .string("text/plain")]),
            .variant(.array(element: "o", [.objectPath("/a")])),
        ]
        let echoed = try client.call(Self.name, "/org/keyhaven/test", "org.keyhaven.Echo", "Echo", values)
        #expect(echoed == values)
    }

    @Test("A D-Bus error comes back by name; a name another connection owns is not claimed; a client appears with its pid")
    func errorsNamesAndClients() throws {
        try #require(Self.hasDaemon, "scripts/bootstrap installs dbus")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Server(address: bus.address, name: Self.name)
        let client = try BusConnection(address: bus.address)
        do throws(BusError) {
            _ = try client.call(Self.name, "/org/keyhaven/test", "org.keyhaven.Echo", "Fail")
            Issue.record("a failed call returned")
        } catch {
            #expect(error == BusError("org.keyhaven.Error.Refused", "refused as asked"))
        }
        let other = try BusConnection(address: bus.address)
        #expect(try other.claim(Self.name) == false)
        // The client, connected after the server served, was seen appearing with this process's pid.
        #expect(server.appeared.clients.withLock { $0.values.contains(getpid()) })
        // A stopped server leaves the bus: its name is free for another at once.
        server.stop()
        var claimed = false
        for _ in 0..<50 where !claimed {
            claimed = try other.claim(Self.name)
            if !claimed { usleep(20_000) }
        }
        #expect(claimed)
    }

    @Test("An address where no bus listens is refused with a message, not a crash")
    func noBus() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-nobus")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do throws(StoreError) {
            _ = try BusConnection(address: "unix:path=\(folder)/none")
            Issue.record("connected to no bus")
        } catch {
            #expect(error.code == .notAvailable && error.message.contains("cannot connect to the bus at unix:path=\(folder)/none"))
        }
    }
}
