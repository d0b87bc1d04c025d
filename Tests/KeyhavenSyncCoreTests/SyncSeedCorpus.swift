import Foundation
import KeychainModel
import KeyhavenSyncCore
import Testing

/// Writes the `sync` fuzz target's seed corpus (Tests/FuzzCorpus/sync) when
/// KEYHAVEN_WRITE_SYNC_SEEDS=1: honest entries of every kind, a sealed record, a key share, a
/// rotation, a pull's answer, relayed messages and a request signature's headers. Otherwise it checks that the committed seeds still decode.
struct SyncSeedCorpus {
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus/sync")
    }

    @Test("The sync seeds decode as what they were written as")
    func seeds() throws {
        if ProcessInfo.processInfo.environment["KEYHAVEN_WRITE_SYNC_SEEDS"] == "1" { try write() }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasPrefix("seed-") }
        #expect(files.count >= 10)
        for file in files where file.hasPrefix("seed-entry") {
            #expect((try? LogEntry.decode(Array(try Data(contentsOf: Self.folder.appendingPathComponent(file))))) != nil, "\(file)")
        }
    }

    private func write() throws {
        var log = TestLog()
        let second = DeviceIdentity()
        log.add(second, name: "laptop", by: log.creator)
        log.record("a payload", by: second)
        log.record("", by: log.creator, deleted: true)
        log.append(.heartbeat(1_700_000_000_000), by: second)
        log.rotate(by: log.creator, sharingWith: [log.creator, second])
        log.append(.removeDevice(second.id), by: log.creator)
        log.rotate(by: log.creator, sharingWith: [log.creator])
        try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
        for (index, entry) in log.entries.enumerated() {
            try Data(entry.wireBytes).write(to: Self.folder.appendingPathComponent("seed-entry-\(index + 1)"))
        }
        if case .record(let record) = log.entries[2].body {
            try Data(record.wireBytes).write(to: Self.folder.appendingPathComponent("seed-record"))
        }
        if case .addDevice(let addition) = log.entries[1].body {
            try Data(addition.share.wireBytes).write(to: Self.folder.appendingPathComponent("seed-share"))
        }
        if case .rotateKeys(let rotation) = log.entries[5].body {
            try Data(rotation.wireBytes).write(to: Self.folder.appendingPathComponent("seed-rotation"))
        }
        let batch = LogBatch(head: log.entries[2].head, entries: Array(log.entries.prefix(3)))
        try Data(batch.wireBytes).write(to: Self.folder.appendingPathComponent("seed-batch"))
        try Data(RelayMessages([[1, 2, 3], Array("a relayed message".utf8)]).wireBytes).write(to: Self.folder.appendingPathComponent("seed-relay"))
        let signature = RequestSignature(method: "GET", target: "/v1/accounts/x/entries?after=0", body: [], by: second)
        let text = signature.headers.map(\.value).joined(separator: "\n") + "\n/v1/accounts/x/entries?after=0"
        try Data(text.utf8).write(to: Self.folder.appendingPathComponent("seed-signature"))
    }
}
