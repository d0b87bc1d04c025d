import Foundation
import KeyhavenSyncCore

/// An account's log as honest devices write it, for the verifier's tests.
struct TestLog {
    let account = AccountID()
    var viewKey = ViewKey(epoch: 1)
    var entries: [LogEntry] = []
    var counters: [DeviceID: UInt64] = [:]
    let creator = DeviceIdentity()

    var head: LogHead { entries.last?.head ?? .empty }

    /// A log whose first entry adds `creator`.
    init() {
        append(.addDevice(RosterAddition(device: creator.id, keys: creator.publicKeys, name: "first machine", viewKey: viewKey,
                                         account: account)), by: creator)
    }

    @discardableResult
    mutating func append(_ body: EntryBody, by device: DeviceIdentity, epoch: UInt32? = nil) -> LogEntry {
        let counter = (counters[device.id] ?? 0) + 1
        counters[device.id] = counter
        let entry = LogEntry(body, account: account, after: head, counter: counter, epoch: epoch ?? viewKey.epoch, signedBy: device)
        entries.append(entry)
        return entry
    }

    /// Adds `device` to the roster, by `sponsor`.
    mutating func add(_ device: DeviceIdentity, name: String, by sponsor: DeviceIdentity) {
        append(.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: name, viewKey: viewKey, account: account)),
               by: sponsor)
    }

    /// A record entry with `payload`, by `device`.
    @discardableResult
    mutating func record(_ payload: String, by device: DeviceIdentity, record: RecordID = RecordID(), version: UInt64 = 1,
                         deleted: Bool = false) -> LogEntry {
        let sealed = SealedRecord.seal(Array(payload.utf8), record: record, syncClass: .a, version: version, isDeleted: deleted,
                                       viewKey: viewKey, account: account)
        return append(.record(sealed), by: device)
    }

    /// A rotation to the next epoch, shared with `remaining`.
    mutating func rotate(by device: DeviceIdentity, sharingWith remaining: [DeviceIdentity]) {
        let next = ViewKey(epoch: viewKey.epoch + 1)
        append(.rotateKeys(KeyRotation(from: viewKey, to: next, recipients: remaining.map { ($0.id, $0.publicKeys) }, account: account)),
               by: device)
        viewKey = next
    }

    /// The state of a device that verified the whole log.
    func verified() throws -> LogState {
        try LogState(account: account).verifying(entries, serverHead: head)
    }
}
