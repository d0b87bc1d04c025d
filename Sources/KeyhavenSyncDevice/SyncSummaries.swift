import KeyhavenAgentClient
import KeyhavenSyncCore

// What `keyhaven sync now`, `status` and `devices` print, as the agent's answers carry it: the
// same summaries whether the work ran in the command's process or in the agent.

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
                  staleDevices: status.staleDevices.map(SyncDeviceSummary.init))
    }
}

extension SyncDeviceSummary {
    package init(_ device: SyncDeviceInfo) {
        self.init(id: device.id.hex, name: device.name, addedBy: device.addedBy.hex, addedAt: device.addedAt, lastSeen: device.lastSeen,
                  lastHeartbeat: device.lastHeartbeat, isActive: device.isActive, isThisDevice: device.isThisDevice,
                  isRecoveryKey: device.isRecoveryKey)
    }
}
