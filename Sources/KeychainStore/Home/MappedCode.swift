#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import CHardening

/// The code in a process, read from what the kernel has mapped into it (`/proc/PID/maps`), not
/// from what its environment says it loaded (docs/access.md, "Code in the process").
///
/// A program whose code is its own runs its executable and files the user cannot modify (the
/// system's libraries). Any other executable mapping (a library preloaded and then scrubbed from
/// the environment, one planted beside the program and found through its RUNPATH, one loaded from
/// memory or deleted since) is code the program's file does not vouch for.
package enum MappedCode {
    /// A file as the kernel names it in a mapping: its device's major and minor number and its
    /// inode, the same in every mount namespace.
    package struct FileID: Hashable, Sendable {
        package let major: UInt32
        package let minor: UInt32
        package let inode: UInt64

        package init(major: UInt32, minor: UInt32, inode: UInt64) {
            self.major = major
            self.minor = minor
            self.inode = inode
        }

        /// The file `info` describes (`st_dev` in glibc's encoding).
        package init(_ info: stat) {
            let device = UInt64(info.st_dev)
            self.init(major: UInt32(truncatingIfNeeded: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)),
                      minor: UInt32(truncatingIfNeeded: (device & 0xff) | ((device >> 12) & ~0xff)),
                      inode: UInt64(info.st_ino))
        }
    }

    /// One executable mapping of a file.
    package struct Mapping: Hashable, Sendable {
        package let file: FileID
        /// The path as the process sees it; it ends in " (deleted)" when the file was removed or
        /// replaced since it was mapped.
        package let path: String

        package init(file: FileID, path: String) {
            self.file = file
            self.path = path
        }
    }

    /// The executable mappings of files in a maps file (the pseudo-files `[vdso]` and the like
    /// excepted), each file once. A line that cannot be read is a mapping of no known file.
    /// Scanned in place: only the executable lines' fields become numbers and text.
    package static func executableMappings(_ maps: [UInt8]) -> [Mapping] {
        var seen = Set<Mapping>()
        var mappings: [Mapping] = []
        let space = UInt8(ascii: " "), newline = UInt8(ascii: "\n")
        maps.withUnsafeBufferPointer { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != newline { end += 1 }
                defer { start = end + 1 }
                // address perms offset dev inode path: the fields' starts, found past each run of spaces.
                var fields: [Int] = []
                var index = start
                while fields.count < 6 && index < end {
                    while index < end && bytes[index] == space { index += 1 }
                    if index < end { fields.append(index) }
                    if fields.count == 6 { break }
                    while index < end && bytes[index] != space { index += 1 }
                }
                guard fields.count >= 2, fields[1] + 2 < end, bytes[fields[1] + 2] == UInt8(ascii: "x") else { continue }
                guard fields.count >= 5, let device = Self.device(bytes, from: fields[3], to: end),
                      let inode = Self.number(bytes, from: fields[4], to: end, radix: 10) else {
                    mappings.append(Mapping(file: FileID(major: 0, minor: 0, inode: 0), path: "(unreadable mapping)"))
                    continue
                }
                // Anonymous executable memory (inode 0): the kernel's vdso, or code the process wrote
                // itself, which only its own code (or a debugger) can do.
                if inode == 0 { continue }
                let path = fields.count == 6 ? String(decoding: UnsafeBufferPointer(rebasing: bytes[fields[5]..<end]), as: UTF8.self) : ""
                let mapping = Mapping(file: FileID(major: device.major, minor: device.minor, inode: inode), path: path)
                if seen.insert(mapping).inserted { mappings.append(mapping) }
            }
        }
        return mappings
    }

    /// The number in `bytes` from `start` up to the next space or `end`.
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, radix: UInt64) -> UInt64? {
        var value: UInt64 = 0
        var index = start
        while index < end && bytes[index] != UInt8(ascii: " ") {
            let byte = bytes[index]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
            let (times, overflow) = value.multipliedReportingOverflow(by: radix)
            guard !overflow else { return nil }
            value = times + digit
            index += 1
        }
        return index > start ? value : nil
    }

    /// `MAJOR:MINOR` in hexadecimal.
    private static func device(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> (major: UInt32, minor: UInt32)? {
        var colon = start
        while colon < end && bytes[colon] != UInt8(ascii: ":") && bytes[colon] != UInt8(ascii: " ") { colon += 1 }
        guard colon < end, bytes[colon] == UInt8(ascii: ":"),
              let major = number(bytes, from: start, to: colon, radix: 16), let minor = number(bytes, from: colon + 1, to: end, radix: 16),
              major <= UInt64(UInt32.max), minor <= UInt64(UInt32.max) else { return nil }
        return (UInt32(major), UInt32(minor))
    }

    /// Whether every mapping is the executable itself or a file the user cannot modify, seen
    /// through `root`: "" for a process in this process's mount namespace, `/proc/PID/root`
    /// for one in another (its paths are its own view). The first mapping that is neither, if any.
    package static func foreignCode(_ mappings: [Mapping], executable: FileID, root: String) -> Mapping? {
        mappings.first { mapping in
            if mapping.file == executable { return false }
            return !isSystemFile(mapping, root: root)
        }
    }

    /// A file whose contents the user cannot have written: owned by root and writable by nobody
    /// else, still the file the process maps at that path, and not on a FUSE file system (whose
    /// server, the user's own, says who owns what). The folders above it do not matter here, as
    /// they do for a program known by its path: whatever is at the path, its bytes are root's.
    /// For a user other than root that is code the user cannot modify; root can modify anything
    /// (docs/threat-model.md), and for root it is an installed file.
    static func isSystemFile(_ mapping: Mapping, root: String) -> Bool {
        let path = mapping.path
        guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return false }
        var info = stat()
        guard stat(root + path, &info) == 0, FileID(info) == mapping.file,
              ApplicationIdentityReader.isRootsAlone(info) else { return false }
        return kh_is_fuse(root + path) == 0
    }
}
