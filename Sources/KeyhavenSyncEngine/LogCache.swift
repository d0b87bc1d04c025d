import FoundationEssentials
import KeychainModel
import KeyhavenSyncProtocol

/// The verified log, kept beside the keychain (`sync/ACCOUNT.log` in the keychain home, 0600 in
/// a 0700 folder) so a device verifies only what is new. It holds what the server holds, signed
/// entries and ciphertext, nothing more. It is verified again whenever it is read; one that is
/// missing, damaged or behind the pinned head is dropped and the log pulled again from the start
/// (the pinned head, in the keychain, still guards against a rollback).
struct LogCache: Sendable {
    let folder: String
    let account: AccountID

    var path: String { folder + "/\(account.hex).log" }

    init(home: KeychainHome, account: AccountID) {
        (folder, self.account) = (home.path + "/sync", account)
    }

    /// The cached entries, if they verify and reach `pinned`; else none.
    func load(pinned: LogHead) -> [LogEntry] {
        guard let bytes = try? FileSecurity.readSmallFile(path, maximum: 1 << 30),
              let batch = try? LogBatch(wireBytes: bytes),
              (try? LogState(account: account).verifying(batch.entries, serverHead: batch.head)) != nil,
              batch.head.sequence >= pinned.sequence,
              batch.entries.contains(where: { $0.head == pinned }) || pinned == .empty else { return [] }
        return batch.entries
    }

    func save(_ entries: [LogEntry], head: LogHead) throws(SyncEngineError) {
        do {
            try FileSecurity.createMissingPrivateDirectories(folder)
            try FileSecurity.replace(path, bytes: LogBatch(head: head, entries: entries).wireBytes)
        } catch {
            throw SyncEngineError(.keychain, "the sync log could not be saved: \(error.message)")
        }
    }

    func remove() {
        try? FileSecurity.remove(path)
    }
}
