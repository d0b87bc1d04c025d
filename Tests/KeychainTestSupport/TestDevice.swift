import Foundation
import KeychainModel
import KeychainStore

/// A device for the sync tests: a keychain home and runtime folder of its own, its default
/// keychain opened in the test (to add, change and read items), and `keyhaven` run as a process
/// with that home (to sync). The agent is off: the sync subcommands open the keychain themselves.
package final class TestDevice: @unchecked Sendable {
    package let name: String
    package let home: String
    package let runtime: String
    package let database: KeychainDatabase
    /// Whether `keyhaven` may use (and start) this device's agent, which then syncs in the background.
    package var usesAgent = false
    /// More environment for its `keyhaven` runs (a heartbeat interval, say).
    package var extraEnvironment: [String: String] = [:]

    package static var binaries: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    package init(_ name: String) throws {
        self.name = name
        home = try TemporaryFolder.make(prefix: "keyhaven-device-\(name)")
        runtime = try TemporaryFolder.make(prefix: "keyhaven-device-run")
        let keychainHome = KeychainHome(path: home)
        try keychainHome.prepare()
        database = try KeychainRegistry().database(at: keychainHome.defaultKeychainPath, home: keychainHome, create: true)
    }

    deinit {
        if usesAgent { _ = try? keyhaven("agent", "stop") }
        try? FileManager.default.removeItem(atPath: home)
        try? FileManager.default.removeItem(atPath: runtime)
    }

    package var environment: [String: String] {
        ["KEYHAVEN_HOME": home, "XDG_RUNTIME_DIR": runtime, "KEYHAVEN_AGENT": usesAgent ? "auto" : "off", "PATH": "/usr/bin:/bin", "HOME": home]
            .merging(extraEnvironment) { $1 }
    }

    /// Runs `keyhaven ARGUMENTS` for this device to its end.
    @discardableResult
    package func keyhaven(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
        try run(Self.binaries.appendingPathComponent("keyhaven").path, arguments)
    }

    /// Runs `executable` with this device's environment to its end, `input` on its standard input.
    package func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String, error: String) {
        let process = Process(), output = Pipe(), error = Pipe(), stdin = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Starts `keyhaven ARGUMENTS` and returns at once, with its standard output's reader.
    package func start(_ arguments: String...) throws -> (process: Process, output: FileHandle) {
        let process = Process(), output = Pipe()
        process.executableURL = Self.binaries.appendingPathComponent("keyhaven")
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output.fileHandleForReading)
    }

    /// Adds (or changes) a generic password; synchronizable unless told otherwise.
    package func set(_ account: String, _ secret: String, service: String = "sync-test", synchronizable: Bool = true,
             accessibility: String = "ak", extra: [String: AttributeValue] = [:]) throws {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string(account), "svce": .string(service), "sync": .number(synchronizable ? 1 : 0)]
        query.limit = nil
        if (try? database.find(query, caller: Self.caller, withSecrets: false)) != nil {
            var changes = ItemChanges()
            changes.secret = Data(secret.utf8)
            changes.attributes = extra
            _ = try database.update(query, with: changes, caller: Self.caller)
        } else {
            var attributes = query.criteria.merging(extra) { $1 }
            attributes["pdmn"] = .string(accessibility)
            attributes["agrp"] = .string("test.group")
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data(secret.utf8)), caller: Self.caller)
        }
    }

    package func remove(_ account: String, service: String = "sync-test") throws {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string(account), "svce": .string(service), "sync": .number(1)]
        _ = try database.delete(query, caller: Self.caller, makeTombstones: false)
    }

    /// The synchronizable generic passwords: account → secret.
    package func items(synchronizable: Bool = true) throws -> [String: String] {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["sync": .number(synchronizable ? 1 : 0)]
        query.limit = nil
        guard (try? database.find(query, caller: Self.caller, withSecrets: false)) != nil else { return [:] }
        let found = try database.find(query, caller: Self.caller, withSecrets: true)
        var items: [String: String] = [:]
        for item in found where item.attributes["svce"] != .string("com.keyhaven.sync") {
            guard case .string(let account)? = item.attributes["acct"] else { continue }
            items[account] = item.secret.map { String(decoding: $0, as: UTF8.self) }
        }
        return items
    }

    package static let caller = Caller(accessGroups: ["test.group"])
}
