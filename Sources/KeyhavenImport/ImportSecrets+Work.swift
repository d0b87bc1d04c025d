#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeyhavenCLI
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// `import-secrets`'s work: every password of the source read first (a source that fails to
/// read writes nothing), then each added unless the keychain has it already.
extension ImportSecrets: HelperWork {
    /// What a source gives: the items, and what was left out and why.
    private struct Batch {
        var items: [NewItem]
        var leftOut: [String] = []
    }

    package func work() throws {
        try perform("SecKeychainItemImport") { () throws(StoreError) in
            let batch: Batch
            switch from {
            case "csv": batch = try readCSV()
            case "pass": batch = try readPass()
            default: batch = try readSecretService()
            }
            let notes = batch.leftOut.isEmpty ? "" : "; " + batch.leftOut.joined(separator: "; ")
            if dryRun {
                printLine("\(Self.passwords(batch.items.count)) would be imported (dry run: nothing written)\(notes)")
                return
            }
            let session = try Session.open()
            let path = try session.path(keychain)
            var (added, present) = (0, 0)
            for (index, item) in batch.items.enumerated() {
                do throws(StoreError) {
                    try session.send(.add(keychain: path, item: item, caller: session.caller))
                    added += 1
                } catch where error.code == .duplicateItem {
                    present += 1
                }
                showProgress("importing \(index + 1)/\(batch.items.count)")
            }
            showProgress(nil)
            printLine("\(Self.passwords(added)) imported, \(present) already there\(notes)")
        }
    }

    private static func passwords(_ count: Int) -> String { "\(count) password\(count == 1 ? "" : "s")" }

    private func readCSV() throws(StoreError) -> Batch {
        guard let file, let data = FileManager.default.contents(atPath: file) else {
            throw StoreError(.invalidParameter, "cannot read \(file ?? "the file")")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw StoreError(.unknownFormat, "\(file) is not UTF-8 text") }
        let passwords = try ExportedPassword.read(csv: text)
        let items = passwords.compactMap(\.item)
        let skipped = passwords.count - items.count
        return Batch(items: items, leftOut: skipped > 0 ? ["\(skipped) without a URL or a title left out"] : [])
    }

    /// Every entry decrypted before anything is written; a dry run decrypts nothing.
    private func readPass() throws(StoreError) -> Batch {
        let store = PassStore(file)
        let entries = try store.entries()
        if dryRun { return Batch(items: entries.map { PassStore.item($0, secret: Data()) }) }
        var items: [NewItem] = []
        for (index, entry) in entries.enumerated() {
            items.append(PassStore.item(entry, secret: try store.decrypt(entry)))
            showProgress("decrypting \(index + 1)/\(entries.count)")
        }
        showProgress(nil)
        return Batch(items: items)
    }

    /// Every item of the running provider (not Keyhaven's own), read through a DH session.
    private func readSecretService() throws(StoreError) -> Batch {
        let reader = try SecretServiceReader()
        guard let pid = try reader.providerPID() else {
            throw StoreError(.notAvailable, "no program provides org.freedesktop.secrets on the session bus: start the one to import "
                + "from (gnome-keyring, KeePassXC with its Secret Service integration on)")
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
           (exe as NSString).lastPathComponent == "keyhavend" {
            throw StoreError(.invalidParameter, "org.freedesktop.secrets is provided by Keyhaven's own keyhavend: its items are in the keychain already")
        }
        let read = try reader.readAll(withSecrets: !dryRun) { done, total in showProgress("reading \(done)/\(total)") }
        showProgress(nil)
        var batch = Batch(items: [])
        var tooLarge = 0
        for entry in read.entries {
            let lookup = SecretServiceAttributes(attributes: entry.attributes, contentType: entry.contentType)
            guard (try? lookup.validate()) != nil else {
                tooLarge += 1
                continue
            }
            batch.items.append(NewItem(itemClass: .genericPassword, attributes: SecretItemMapping.keychainAttributes(lookup, label: entry.label),
                                       secret: entry.secret, access: .creatorOnly))
        }
        if tooLarge > 0 { batch.leftOut.append("\(tooLarge) with more attributes than a keychain item takes (64, 4096 bytes each) left out") }
        if !read.lockedCollections.isEmpty {
            batch.leftOut.append("locked, not read: \(read.lockedCollections.joined(separator: ", "))")
        }
        return batch
    }

    /// A progress line on a terminal (standard error); nil clears it.
    private func showProgress(_ text: String?) {
        guard isatty(2) != 0 else { return }
        let line = Array("\r\u{1B}[K\(text ?? "")".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
