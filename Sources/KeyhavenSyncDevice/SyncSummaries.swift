import KeyhavenAgentClient
import KeyhavenSyncCore

// What `keyhaven sync now` and `sync status` print, as the agent's answers carry it: the same
// summaries whether the round ran in the command's process or in the agent.

extension SyncRoundSummary {
    package init(_ report: SyncReport) {
        self.init(pulled: report.pulled, pushed: report.pushed, added: report.added, changed: report.changed, deleted: report.deleted,
                  waiting: report.waiting, head: report.head.fingerprint)
    }
}

extension SyncStatusSummary {
    package init(_ status: SyncStatusInfo) {
        self.init(server: status.server, account: status.account.hex, device: status.device.hex, name: status.name,
                  head: status.head.fingerprint, sequence: status.head.sequence, items: status.items, epoch: status.epoch,
                  isRemoved: status.isRemoved, refusal: status.refusal.map { Refusal(name: $0.name, message: $0.message) },
                  staleDevices: status.staleDevices.map { StaleDevice(id: $0.id.hex, name: $0.name, lastHeartbeat: $0.lastHeartbeat ?? 0) })
    }
}
