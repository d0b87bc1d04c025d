#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// The verified log, kept beside the keychain (`sync/ACCOUNT.log` in the keychain home, 0600 in
/// a 0700 folder) so a device verifies only what is new. It holds what the server holds, signed
/// entries and ciphertext, nothing more: each entry length-prefixed (4 bytes, little-endian), in
/// log order, so new entries are appended, not the whole log rewritten. It is verified again
/// whenever it is read; an incomplete last entry (a crash while appending) is left out, and a
/// cache that does not verify or does not reach the pinned head is dropped and the log pulled
/// again from the start (the pinned head, in the keychain, still guards against a rollback).
struct LogCache: Sendable {
    let folder: String
    let account: AccountID

    var path: String { folder + "/\(account.hex).log" }

    init(home: KeychainHome, account: AccountID) {
        (folder, self.account) = (home.path + "/sync", account)
    }

    /// What a load found: the entries, the state they verify to, and the bytes they take.
    struct Loaded {
        var entries: [LogEntry] = []
        var log: LogState
        var byteCount = 0
    }

    /// The cached entries, if they verify and reach `pinned`; else none (an empty log).
    func load(pinned: LogHead) -> Loaded {
        let empty = Loaded(log: LogState(account: account))
        guard let bytes = try? FileSecurity.readSmallFile(path, maximum: 1 << 30) else { return empty }
        var loaded = empty
        var reader = ByteReader(bytes)
        while let length = try? reader.u32(), Int(length) <= LogEntry.maximumSize, let body = try? reader.take(Int(length)),
              let entry = try? LogEntry(wireBytes: Array(body)) {
            loaded.entries.append(entry)
            loaded.byteCount = bytes.count - reader.remaining
        }
        guard let log = try? LogState(account: account).verifying(loaded.entries, serverHead: loaded.entries.last?.head ?? .empty),
              log.head.sequence >= pinned.sequence,
              pinned == .empty || loaded.entries.contains(where: { $0.head == pinned }) else { return empty }
        loaded.log = log
        return loaded
    }

    /// Adds `new` after the `byteCount` bytes the cache holds (`all` is the whole verified log,
    /// ending with `new`); when the file is not that long (a new cache, or another process's),
    /// writes `all` afresh. The cache's new length.
    func append(_ new: [LogEntry], all: [LogEntry], after byteCount: Int) throws(SyncEngineError) -> Int {
        let encoded = Self.encode(new)
        do {
            try FileSecurity.createMissingPrivateDirectories(folder)
            if byteCount > 0, FileSecurity.fileSize(path) == byteCount {
                let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
                if descriptor >= 0 {
                    defer { close(descriptor) }
                    let written = encoded.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    if written == encoded.count, fsync(descriptor) == 0 { return byteCount + encoded.count }
                    // A short write leaves an incomplete entry, which a load leaves out: write anew.
                }
            }
            let whole = Self.encode(all)
            try FileSecurity.replace(path, bytes: whole)
            return whole.count
        } catch {
            throw SyncEngineError(.keychain, "the sync log could not be saved: \(error.message)")
        }
    }

    static func encode(_ entries: [LogEntry]) -> [UInt8] {
        var writer = ByteWriter()
        for entry in entries {
            let bytes = entry.wireBytes
            writer.u32(UInt32(bytes.count))
            writer.raw(bytes)
        }
        return writer.bytes
    }

    func remove() {
        try? FileSecurity.remove(path)
    }
}
