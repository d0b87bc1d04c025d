import Foundation
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Synchronization

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// An account with devices on it, each pushing 1 KiB records as a device does: at the head it
/// knows, pulling and trying again when another device was first.
final class BenchAccount: Sendable {
    let id = AccountID()
    let viewKey = ViewKey(epoch: 1)
    let devices: [DeviceIdentity]
    private let counters: Mutex<[UInt64]>
    private let knownHead: Mutex<LogHead>

    private init(devices: [DeviceIdentity], head: LogHead) {
        self.devices = devices
        counters = Mutex(devices.map { _ in 100 })
        knownHead = Mutex(head)
    }

    static func make(_ client: SyncClient, devices count: Int) async throws -> BenchAccount {
        let devices = (0..<count).map { _ in DeviceIdentity() }
        let probe = BenchAccount(devices: devices, head: .empty)
        let creator = devices[0]
        let genesis = LogEntry(.addDevice(RosterAddition(device: creator.id, keys: creator.publicKeys, name: "bench 0", viewKey: probe.viewKey,
                                                         account: probe.id)),
                               account: probe.id, after: .empty, counter: 1, epoch: 1, signedBy: creator)
        var head = try await client.createAccount(genesis)
        var entries: [LogEntry] = []
        var position = head
        for (index, device) in devices.enumerated().dropFirst() {
            let entry = LogEntry(.addDevice(RosterAddition(device: device.id, keys: device.publicKeys, name: "bench \(index)", viewKey: probe.viewKey,
                                                           account: probe.id)),
                                 account: probe.id, after: position, counter: UInt64(index) + 1, epoch: 1, signedBy: creator)
            entries.append(entry)
            position = entry.head
        }
        if !entries.isEmpty { head = try await client.push(LogBatch(head: head, entries: entries)) }
        probe.knownHead.withLock { $0 = head }
        return probe
    }

    /// The sequence of the head this process last saw.
    var knownSequence: UInt64 { knownHead.withLock { $0.sequence } }

    func head(_ client: SyncClient) async throws -> LogHead {
        try await client.pull(id, after: knownHead.withLock { $0 }.sequence, as: devices[0]).head
    }

    /// One record pushed by device `index`, retried until it lands.
    func push(by index: Int, _ client: SyncClient) async throws {
        let device = devices[index]
        let payload = [UInt8](repeating: 0x5A, count: 1024)
        for _ in 0..<1000 {
            let head = knownHead.withLock { $0 }
            let counter = counters.withLock { counters in
                counters[index] += 1
                return counters[index]
            }
            let sealed = SealedRecord.seal(payload, record: RecordID(), syncClass: .a, version: counter, isDeleted: false, viewKey: viewKey, account: id)
            let entry = LogEntry(.record(sealed), account: id, after: head, counter: counter, epoch: 1, signedBy: device)
            let landed: LogHead?
            do throws(SyncClientError) {
                landed = try await client.push(LogBatch(head: head, entries: [entry]))
            } catch {
                guard error.isConflict else { throw error }
                landed = nil
            }
            if let landed {
                knownHead.withLock { if $0.sequence < landed.sequence { $0 = landed } }
                return
            }
            let pulled = try await client.pull(id, after: head.sequence, as: device)
            knownHead.withLock { if $0.sequence < pulled.head.sequence { $0 = pulled.head } }
        }
        throw BenchError("a push never landed")
    }
}
