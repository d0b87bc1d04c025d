import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// The last refusal of a round (`sync/refusal`, 0600 in the home's 0700 sync folder), so that
/// `sync status` names it after `sync now` or the agent's background round met it; removed when a
/// round succeeds. It holds the refusal's name and message: positions, device ids and epochs,
/// never an item or a key.
struct RefusalNote: Sendable {
    let folder: String
    var path: String { folder + "/refusal" }

    init(home: KeychainHome) { folder = home.path + "/sync" }

    func record(_ error: SyncEngineError) {
        guard let refusal = error.refusal else { return }
        try? FileSecurity.createMissingPrivateDirectories(folder)
        try? FileSecurity.replace(path, bytes: Array("\(refusal.name)\n\(error.message)\n".utf8))
    }

    func clear() { try? FileSecurity.remove(path) }

    /// The refusal's name and message, if the last round ended in one.
    func read() -> (name: String, message: String)? {
        guard let bytes = try? FileSecurity.readSmallFile(path, maximum: 1 << 16) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2 else { return nil }
        return (String(lines[0]), String(lines[1]))
    }
}
