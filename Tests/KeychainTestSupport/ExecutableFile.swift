import Foundation

/// Programs and scripts a test runs, written by a child process and never by the test's own.
///
/// A file this multi-threaded process holds open for writing is inherited by any child another
/// test forks meanwhile, and running the file while that child holds it fails with "Text file
/// busy" (ETXTBSY). A shell writes each file here and exits before the file is run, so no process
/// of the test holds it open.
public enum ExecutableFile {
    /// Writes `text` to `path` with `mode`.
    public static func write(_ text: String, to path: String, mode: mode_t = 0o700) throws {
        try shell(#"umask 077 && cat > "$1" && chmod "$2" "$1""#, [path, String(mode, radix: 8)], input: text)
    }

    /// Copies the program at `source` to `path` with `mode`; with `changed`, one byte more at the
    /// end: another file with another digest and the same code.
    public static func copy(_ source: String, to path: String, changed: Bool = false, mode: mode_t = 0o755) throws {
        let append = changed ? #" && printf '\0' >> "$2""# : ""
        try shell(#"cp "$1" "$2""# + append + #" && chmod "$3" "$2""#, [source, path, String(mode, radix: 8)])
    }

    private static func shell(_ script: String, _ arguments: [String], input: String = "") throws {
        let status = try Shell.run("/bin/sh", ["-c", script, "sh"] + arguments, input: input)
        guard status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: arguments.last ?? ""]) }
    }
}
