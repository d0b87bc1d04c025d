#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// The program `name` as a shell finds it: the first executable of that name in `PATH`'s absolute
/// folders, its links followed (the path the agent sees it run from, for an access object).
package func programOnPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":") where folder.hasPrefix("/") {
        let candidate = folder + "/" + name
        guard access(candidate, X_OK) == 0, let resolved = realpath(candidate, nil) else { continue }
        defer { free(resolved) }
        return String(cString: resolved)
    }
    return nil
}
