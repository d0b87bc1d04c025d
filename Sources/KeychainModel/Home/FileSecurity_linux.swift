#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// File-system calls with the permissions the keychain needs: folders 0700, files 0600.
package enum FileSecurity {
    /// Creates `path` (and missing parents) with mode 0700; tightens an existing folder we own.
    package static func ensurePrivateDirectory(_ path: String) throws(StoreError) {
        var info = stat()
        if stat(path, &info) != 0 {
            let parent = parentFolder(of: path)
            if !parent.isEmpty, parent != path, access(parent, F_OK) != 0 {
                try ensureDirectory(parent)
            }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw error(errno, "cannot create the folder \(path)")
            }
            guard stat(path, &info) == 0 else { throw error(errno, "cannot read the folder \(path)") }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StoreError(.notAvailable, "\(path) is not a folder")
        }
        if info.st_mode & 0o077 != 0 {
            guard info.st_uid == geteuid(), chmod(path, 0o700) == 0 else {
                throw StoreError(.notAvailable, "\(path) is open to other users and cannot be made private (chmod 700 it)")
            }
        }
    }

    /// Creates `path` and its missing parents with mode 0700; changes no folder that exists.
    package static func createMissingPrivateDirectories(_ path: String) throws(StoreError) {
        guard !path.isEmpty, access(path, F_OK) != 0 else { return }
        try createMissingPrivateDirectories(parentFolder(of: path))
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw error(errno, "cannot create the folder \(path)") }
    }

    /// Parents of the keychain home are created with the usual 0755 (like `mkdir -p`).
    private static func ensureDirectory(_ path: String) throws(StoreError) {
        let parent = parentFolder(of: path)
        if !parent.isEmpty, parent != path, access(parent, F_OK) != 0 { try ensureDirectory(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw error(errno, "cannot create the folder \(path)") }
    }

    /// Writes `bytes` to a new file at `path` created 0600, atomically and only if no file is
    /// there yet (write to a unique name, fsync, then `link`). Returns false when another process
    /// created the file first.
    package static func createExclusively(_ path: String, bytes: [UInt8]) throws(StoreError) -> Bool {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw error(errno, "cannot create \(temporary)") }
        defer { unlink(temporary) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else { throw error(errno, "cannot write \(temporary)") }
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw error(errno, "cannot create \(path)")
        }
        return true
    }

    /// Replaces the file at `path` with `bytes` atomically (a 0600 file written beside it,
    /// fsynced, then renamed over it).
    package static func replace(_ path: String, bytes: [UInt8]) throws(StoreError) {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw error(errno, "cannot create \(temporary)") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw error(code, "cannot write \(path)")
        }
    }

    /// Reads a whole small file into a byte array the caller zeroizes.
    package static func readSmallFile(_ path: String, maximum: Int) throws(StoreError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw error(errno, "cannot open \(path)")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximum + 1)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 { zeroize(&buffer); throw error(errno, "cannot read \(path)") }
            if n == 0 { break }
            total += n
        }
        var result = Array(buffer[0..<total])
        zeroize(&buffer)
        if total > maximum { zeroize(&result); throw StoreError(.invalidKeychain, "\(path) is larger than expected") }
        return result
    }

    /// What identifies one version of a file: a file replaced (by rename) or rewritten differs.
    package struct Stamp: Sendable, Hashable {
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    /// The file's stamp, or nil if it does not exist.
    package static func stamp(_ path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Stamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                     seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }

    /// The size of a file, or nil if it does not exist.
    package static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Removes a file; a file that is not there is fine.
    package static func remove(_ path: String) throws(StoreError) {
        if unlink(path) != 0 && errno != ENOENT { throw error(errno, "cannot remove \(path)") }
    }

    /// Makes a file private to its owner.
    package static func restrictFile(_ path: String) throws(StoreError) {
        guard chmod(path, 0o600) == 0 else { throw error(errno, "cannot restrict \(path)") }
    }

    package static func error(_ code: Int32, _ what: String) -> StoreError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT: return StoreError(.diskFull, "\(what): \(reason)")
        case EROFS, EACCES, EPERM: return StoreError(.readOnly, "\(what): \(reason)")
        case EIO: return StoreError(.io, "\(what): \(reason)")
        default: return StoreError(.notAvailable, "\(what): \(reason)")
        }
    }
}

/// The folder part of a path ("" for a bare name, "/" for a file in the root).
package func parentFolder(of path: String) -> String {
    var trimmed = path
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
}
