#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import KeychainModel

/// A password-store folder (pass(1)): one gpg-encrypted file per entry, `NAME.gpg`, in folders.
/// Each entry becomes a generic password whose service is its path (`email/work`) and whose
/// secret is the decrypted file, with the account from a `login:`, `user:` or `username:` line.
struct PassStore {
    let folder: String

    /// `given`, else `$PASSWORD_STORE_DIR`, else `~/.password-store` (pass's own order).
    init(_ given: String?) {
        let environment = ProcessInfo.processInfo.environment
        folder = given ?? environment["PASSWORD_STORE_DIR"] ?? (NSHomeDirectory() + "/.password-store")
    }

    /// The entries' paths, sorted; hidden files and folders (`.git`, `.gpg-id`) left out.
    func entries() throws(StoreError) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw StoreError(.invalidParameter, "\(folder) is not a password store (pass init makes one)")
        }
        guard let walker = FileManager.default.enumerator(atPath: folder) else {
            throw StoreError(.invalidParameter, "cannot read \(folder)")
        }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            if path.hasSuffix(".gpg") { found.append(String(path.dropLast(4))) }
        }
        return found.sorted()
    }

    /// The entry decrypted by gpg (which asks for its key's passphrase through gpg-agent).
    func decrypt(_ entry: String) throws(StoreError) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gpg", "--quiet", "--yes", "--batch", "--decrypt", folder + "/" + entry + ".gpg"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            throw StoreError(.notAvailable, "cannot run gpg (install gnupg): \(error.localizedDescription)")
        }
        let plaintext = output.fileHandleForReading.readDataToEndOfFile()
        _ = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StoreError(.decode, "gpg could not decrypt \(entry) (exit status \(process.terminationStatus)); nothing was imported")
        }
        return plaintext
    }

    /// The account an entry names: the value of its first `login:`, `user:` or `username:` line
    /// after the first (the first is the password), else "".
    static func account(in secret: Data) -> String {
        let lines = String(decoding: secret, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            if ["login", "user", "username"].contains(key) {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return ""
    }

    /// The item an entry becomes.
    static func item(_ entry: String, secret: Data) -> NewItem {
        NewItem(itemClass: .genericPassword,
                attributes: .named([.service: .string(entry), .account: .string(account(in: secret)), .label: .string(entry)]),
                secret: secret, access: .creatorOnly)
    }
}
