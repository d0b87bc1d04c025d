import ArgumentParser
import Foundation
import KeyhavenCLI
import KeyhavenSyncCore
import KeyhavenSyncDevice

// The subcommands that sync and report: a round, the status, the verified head.
extension SyncNow: SyncWork {
    package func work() async throws {
        let engine = try engine(showsProgress: true)
        let report = try await reporting("now") { () throws(SyncEngineError) in try await engine.syncNow() }
        printLine("In step at \(report.head.fingerprint): pulled \(report.pulled), pushed \(report.pushed) entries; "
                  + "\(report.added) added, \(report.changed) changed, \(report.deleted) deleted here"
                  + (report.waiting > 0 ? "; \(report.waiting) wait for an unlock" : "") + ".")
    }
}

extension SyncStatus: SyncWork {
    package func work() async throws {
        let engine = try engine()
        let staleAfter = UInt64(staleAfter)
        guard let status = try await reporting("status", { () throws(SyncEngineError) in try engine.status(staleAfter: staleAfter) }) else {
            if json { printJSON(["syncing": false]) } else { printLine("Not syncing: `keyhaven sync create --server URL` or `keyhaven sync join` to start.") }
            return
        }
        if json {
            let refusal: Any = status.refusal.map { ["name": $0.name, "message": $0.message] } ?? NSNull()
            printJSON(["syncing": !status.isRemoved, "removed": status.isRemoved, "server": status.server, "account": status.account.hex,
                       "device": status.device.hex, "name": status.name, "head": status.head.fingerprint,
                       "sequence": status.head.sequence, "items": status.items, "epoch": status.epoch, "refusal": refusal,
                       "staleDevices": status.staleDevices.map { ["id": $0.id.hex, "name": $0.name, "lastHeartbeat": $0.lastHeartbeat ?? 0] }])
            return
        }
        if status.isRemoved {
            printLine("This device was removed from its sync account: it syncs no more; its items stay here.")
        } else {
            printLine("Syncing with \(status.server).")
        }
        printLine("Account: \(status.account.hex)")
        printLine("This device: \(status.device.hex) (\(status.name))")
        printLine("Verified head: \(status.head.fingerprint) (key epoch \(status.epoch))")
        printLine("Synced items: \(status.items)")
        if let refusal = status.refusal {
            printLine("The last sync was refused (\(refusal.name)): \(refusal.message)")
        }
        for device in status.staleDevices {
            let since = Date(timeIntervalSince1970: Double(device.lastHeartbeat ?? 0) / 1000).formatted(.iso8601)
            printLine("Warning (stale device): \(device.name) (\(device.id.hex)) has not been heard from since \(since): "
                      + "it is offline, or the server withholds its entries.")
        }
    }
}

extension SyncVerify: SyncWork {
    package func work() async throws {
        let engine = try engine(showsProgress: !json)
        if !offline { _ = try await reporting("verify") { () throws(SyncEngineError) in try await engine.syncNow() } }
        let position = at
        let head = try await reporting("verify") { () throws(SyncEngineError) in try engine.verifiedHead(at: position) }
        if json {
            printJSON(["sequence": head.sequence, "fingerprint": head.fingerprint])
        } else {
            printLine("Verified head: \(head.fingerprint)")
        }
    }
}
