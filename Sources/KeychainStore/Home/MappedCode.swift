#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening

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
    }

    /// The executable mappings of files in a maps file (the pseudo-files `[vdso]` and the like
    /// excepted), each file once. A line that cannot be read is a mapping of no known file.
    package static func executableMappings(_ maps: [UInt8]) -> [Mapping] {
        var seen = Set<Mapping>()
        var mappings: [Mapping] = []
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            // address perms offset dev inode path (the path is the rest, after padding)
            var fields: [ArraySlice<UInt8>] = []
            var rest = line[...]
            while fields.count < 5 {
                rest = rest.drop { $0 == UInt8(ascii: " ") }
                let end = rest.firstIndex(of: UInt8(ascii: " ")) ?? rest.endIndex
                fields.append(rest[rest.startIndex..<end])
                rest = rest[end...]
            }
            let permissions = Array(fields[1])
            guard permissions.count >= 3, permissions[2] == UInt8(ascii: "x") else { continue }
            let path = String(decoding: rest.drop { $0 == UInt8(ascii: " ") }, as: UTF8.self)
            let device = fields[3].split(separator: UInt8(ascii: ":"))
            guard device.count == 2, let major = UInt32(String(decoding: device[0], as: UTF8.self), radix: 16),
                  let minor = UInt32(String(decoding: device[1], as: UTF8.self), radix: 16),
                  let inode = UInt64(String(decoding: fields[4], as: UTF8.self)) else {
                mappings.append(Mapping(file: FileID(major: 0, minor: 0, inode: 0), path: "(unreadable mapping)"))
                continue
            }
            // Anonymous executable memory (inode 0): the kernel's vdso, or code the process wrote
            // itself, which only its own code (or a debugger) can do.
            if inode == 0 { continue }
            let mapping = Mapping(file: FileID(major: major, minor: minor, inode: inode), path: path)
            if seen.insert(mapping).inserted { mappings.append(mapping) }
        }
        return mappings
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
              info.st_uid == 0, info.st_mode & 0o022 == 0 else { return false }
        return kh_is_fuse(root + path) == 0
    }
}
