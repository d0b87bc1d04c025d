import ArgumentParser
import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeyhavenCLI
import KeyhavenSyncCore
import KeyhavenSyncDevice

// The subcommands that sync and report: a round, the status, the verified head.
extension SyncNow: SyncWork {
    package func work() async throws {
        let round: SyncRoundSummary
        if let agent = try runningAgent() {
            round = try agent.ask("now") { (agent) throws(StoreError) in try agent.send(.syncNow).syncRound() }
        } else {
            let engine = try engine(showsProgress: true)
            round = SyncRoundSummary(try await reporting("now") { () throws(SyncEngineError) in try await engine.syncNow() })
        }
        printLine("In step at \(round.head): pulled \(round.pulled), pushed \(round.pushed) entries; "
                  + "\(round.added) added, \(round.changed) changed, \(round.deleted) deleted here"
                  + (round.waiting > 0 ? "; \(round.waiting) wait for an unlock" : "") + ".")
    }
}

extension SyncStatus: SyncWork {
    package func work() async throws {
        let staleAfter = UInt64(staleAfter)
        let found: SyncStatusSummary?
        if let agent = try runningAgent() {
            found = try agent.ask("status") { (agent) throws(StoreError) in try agent.send(.syncStatus(staleAfter: staleAfter)).syncStatus() }
        } else {
            let engine = try engine()
            found = try await reporting("status", { () throws(SyncEngineError) in try engine.status(staleAfter: staleAfter) }).map(SyncStatusSummary.init)
        }
        guard let status = found else {
            if json { printJSON(["syncing": false]) } else { printLine("Not syncing: `keyhaven sync create --server URL` or `keyhaven sync join` to start.") }
            return
        }
        if json {
            let refusal: Any = status.refusal.map { ["name": $0.name, "message": $0.message] } ?? NSNull()
            printJSON(["syncing": !status.isRemoved, "removed": status.isRemoved, "server": status.server, "account": status.account,
                       "device": status.device, "name": status.name, "head": status.head,
                       "sequence": status.sequence, "items": status.items, "epoch": status.epoch, "refusal": refusal,
                       "staleDevices": status.staleDevices.map { ["id": $0.id, "name": $0.name, "lastHeartbeat": $0.lastHeartbeat ?? 0] }])
            return
        }
        if status.isRemoved {
            printLine("This device was removed from its sync account: it syncs no more; its items stay here.")
        } else {
            printLine("Syncing with \(status.server).")
        }
        printLine("Account: \(status.account)")
        printLine("This device: \(status.device) (\(status.name))")
        printLine("Verified head: \(status.head) (key epoch \(status.epoch))")
        printLine("Synced items: \(status.items)")
        if let refusal = status.refusal {
            printLine("The last sync was refused (\(refusal.name)): \(refusal.message)")
        }
        for device in status.staleDevices {
            let since = Date(timeIntervalSince1970: Double(device.lastHeartbeat ?? 0) / 1000).formatted(.iso8601)
            printLine("Warning (stale device): \(device.name) (\(device.id)) has not been heard from since \(since): "
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
