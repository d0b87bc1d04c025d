#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A Flatpak app, identified as xdg-desktop-portal identifies one: by the `.flatpak-info` file at
/// the root of its sandbox (`/proc/PID/root/.flatpak-info`), which Flatpak mounts read-only and the
/// app cannot change (docs/access.md, "Sandboxed apps").
///
/// What a process shows at its root is its own view, which any program of the user can build (a
/// mount namespace of its own with a `.flatpak-info` of its making). So the agent takes the app id
/// only when the program is that app's: its executable is, device and inode, the file at the
/// same place in the deployment the file names (`[Instance] app-path`), and that deployment is
/// the app's (a folder `app/ID/` above it) installed system-wide (owned by root in folders only
/// root writes). Another program, or an app installed in the user's own files, is identified as
/// any program in a namespace of its own: by its digest.
package struct FlatpakSandbox: Sendable, Equatable {
    /// The app id (`[Application] name`).
    package let appID: String
    /// Where the app's files are on the host (`[Instance] app-path`), mounted at `/app` inside.
    package let appPath: String

    package init(appID: String, appPath: String) {
        self.appID = appID
        self.appPath = appPath
    }

    /// The identity's path for an app: never a file's path, so it matches no program outside.
    package var identityPath: String { "flatpak:" + appID }
    /// The app's access group: its id, marked so no program's group is ever the same.
    package var applicationGroup: String { "flatpak:" + appID }

    /// The sandbox of process `pid`, if it has a `.flatpak-info` at its root; nil otherwise.
    /// (The file itself, not a link to one: `/proc/PID/root` leads to the process's root.)
    package static func of(pid: Int32) -> FlatpakSandbox? {
        ProcessFile.read("/proc/\(pid)/root/.flatpak-info", flags: O_NOFOLLOW).flatMap { parse(String(decoding: $0, as: UTF8.self)) }
    }

    /// The app id and app path of a `.flatpak-info` (a key file); nil when either is missing.
    package static func parse(_ text: String) -> FlatpakSandbox? {
        var section = ""
        var appID: String?, appPath: String?
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingWhitespace
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace, value = line[line.index(after: equals)...].trimmingWhitespace
            if section == "Application" && key == "name" { appID = value }
            if section == "Instance" && key == "app-path" { appPath = value }
        }
        guard let appID, isAppID(appID), let appPath, appPath.hasPrefix("/") else { return nil }
        return FlatpakSandbox(appID: appID, appPath: appPath)
    }

    /// Flatpak's rule for an app id: at least three elements of letters, digits, `_` and `-`
    /// (none starting with a digit), 255 bytes at most.
    static func isAppID(_ id: String) -> Bool {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        return id.utf8.count <= 255 && elements.count >= 3 && elements.allSatisfy { element in
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return element.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
        }
    }

    /// Whether the program running `executable` (its path inside the sandbox, and its file) is
    /// this app's: the file at the same place in the app's deployment, installed system-wide.
    package func runs(executablePath: String, file: MappedCode.FileID) -> Bool {
        guard executablePath.hasPrefix("/app/"), !executablePath.contains("/../"), !executablePath.hasSuffix(" (deleted)"),
              appPath.split(separator: "/").contains(where: { $0 == "app" }),
              appPath.contains("/app/\(appID)/") else { return false }
        var info = stat()
        guard stat(appPath + executablePath.dropFirst(4), &info) == 0, MappedCode.FileID(info) == file,
              ApplicationIdentityReader.isRootsAlone(info) else { return false }
        return ApplicationIdentityReader.isProtectedFolder(appPath)
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
