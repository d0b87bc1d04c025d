#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeyhavenCLI

/// `import-secrets`'s work: each password of the export added unless the keychain has it already.
extension ImportSecrets: PKIWork {
    func work() throws {
        try perform("SecKeychainItemImport") { () throws(StoreError) in
            guard let file, let data = FileManager.default.contents(atPath: file) else {
                throw StoreError(.invalidParameter, "cannot read \(file ?? "the file")")
            }
            guard let text = String(data: data, encoding: .utf8) else { throw StoreError(.unknownFormat, "\(file) is not UTF-8 text") }
            let passwords = try ExportedPassword.read(csv: text)
            let items = passwords.compactMap(\.item)
            let skipped = passwords.count - items.count
            if dryRun {
                printLine("\(items.count) password\(items.count == 1 ? "" : "s") would be imported (dry run: nothing written)"
                          + (skipped > 0 ? "; \(skipped) without a URL or a title would be left out" : ""))
                return
            }
            let session = try Session.open()
            let path = try session.path(keychain)
            let showsProgress = isatty(2) != 0
            var (added, present) = (0, 0)
            for (index, item) in items.enumerated() {
                do throws(StoreError) {
                    try session.send(.add(keychain: path, item: item, caller: session.caller))
                    added += 1
                } catch where error.code == .duplicateItem {
                    present += 1
                }
                if showsProgress { printProgress("importing \(index + 1)/\(items.count)") }
            }
            if showsProgress { printProgress("") }
            printLine("\(added) password\(added == 1 ? "" : "s") imported, \(present) already there"
                      + (skipped > 0 ? ", \(skipped) without a URL or a title left out" : ""))
        }
    }

    private func printProgress(_ text: String) {
        let line = Array("\r\u{1B}[K\(text)".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
