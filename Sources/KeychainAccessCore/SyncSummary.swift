import FoundationEssentials
import KeychainModel

/// The Sync page: whether this keychain home syncs, with which server, its devices and when this
/// one last synced, read from `keyhaven sync status --json` and `keyhaven sync devices --json`
/// (the command's own report, so that the window says what the command says).
package struct SyncSummary: Sendable, Equatable {
    package struct Device: Sendable, Equatable, Decodable {
        package let id: String
        package let name: String
        /// Its last heartbeat, in milliseconds since 1970 by its clock; nil before its first.
        package let lastHeartbeat: UInt64?
        package let active: Bool
        package let thisDevice: Bool
        package let recoveryKey: Bool

        /// The device's line on the page.
        package var line: String {
            var notes: [String] = []
            if thisDevice { notes.append("this device") }
            if recoveryKey { notes.append("recovery key") }
            if !active { notes.append("removed") }
            if let seen = lastHeartbeat { notes.append("last synced " + ItemBrowser.text(date: Date(timeIntervalSince1970: Double(seen) / 1000))) }
            return name + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
        }
    }

    private struct Status: Decodable {
        let syncing: Bool
        let server: String?
        let name: String?
        let items: Int?
        let refusal: Refusal?
        struct Refusal: Decodable { let message: String }
    }

    package let syncing: Bool
    package let server: String
    package let items: Int
    package let devices: [Device]
    /// What is wrong: the last round's refusal, or why the status could not be read.
    package let problem: String?

    /// When this device last synced (its last heartbeat).
    package var lastSync: Date? {
        devices.first(where: \.thisDevice)?.lastHeartbeat.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// Reads the status with `keyhaven` (the program at that path) in `environment` (nil: this
    /// process's).
    package static func read(keyhaven: String, environment: [String: String]? = nil) -> SyncSummary {
        let status: ToolRun
        do throws(StoreError) {
            status = try ToolRun.run(keyhaven, ["sync", "status", "--json"], environment: environment)
        } catch {
            return SyncSummary(syncing: false, server: "", items: 0, devices: [], problem: error.message)
        }
        guard status.status == 0, let decoded = try? JSONDecoder().decode(Status.self, from: Data(status.output.utf8)) else {
            let said = Self.firstLine(status.error)
            return SyncSummary(syncing: false, server: "", items: 0, devices: [],
                               problem: said.isEmpty ? "keyhaven sync status failed with exit status \(status.status)." : said)
        }
        guard decoded.syncing else { return SyncSummary(syncing: false, server: decoded.server ?? "", items: 0, devices: [], problem: nil) }
        let listed = try? ToolRun.run(keyhaven, ["sync", "devices", "--json"], environment: environment)
        let devices = listed.flatMap { try? JSONDecoder().decode([Device].self, from: Data($0.output.utf8)) } ?? []
        return SyncSummary(syncing: true, server: decoded.server ?? "", items: decoded.items ?? 0, devices: devices,
                           problem: decoded.refusal?.message ?? (listed?.status == 0 ? nil : listed.map { Self.firstLine($0.error) }))
    }

    /// Sync Now: a round with the server; what the command said, and whether it succeeded.
    package static func syncNow(keyhaven: String, environment: [String: String]? = nil) -> (message: String, succeeded: Bool) {
        do throws(StoreError) {
            let run = try ToolRun.run(keyhaven, ["sync", "now"], environment: environment)
            return run.status == 0 ? (Self.firstLine(run.output), true) : (Self.firstLine(run.error), false)
        } catch {
            return (error.message, false)
        }
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n").first ?? "")
    }
}
