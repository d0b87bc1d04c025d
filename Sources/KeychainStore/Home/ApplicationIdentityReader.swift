#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import FoundationEssentials
import Synchronization

/// Reads what a program is from the kernel and its file: ``ApplicationIdentity`` (the rule is in
/// docs/access.md, "Which program is asking").
///
/// The digest is SHA-256 of the executable's contents read through a descriptor of the running
/// file (`/proc/PID/exe`), never through its path, so a file swapped on disk after the program
/// started is not what gets hashed. Digests are cached by the file's device, inode, size,
/// modification and change times: any write to the file changes its change time.
package enum ApplicationIdentityReader {
    private struct FileKey: Hashable {
        let device: UInt64, inode: UInt64, size: Int64
        let modified: Int64, modifiedNanoseconds: Int, changed: Int64, changedNanoseconds: Int
    }

    private static let digests = Mutex<[FileKey: Data]>([:])
    private static let own = Mutex<ApplicationIdentity?>(nil)

    /// The running process's identity (its digest read once).
    package static func current() -> ApplicationIdentity {
        if let identity = own.withLock({ $0 }) { return identity }
        let fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { close(fd) } }
        let identity = identity(executable: fd, path: currentPath, environment: ProcessInfo.processInfo.environment)
        own.withLock { $0 = identity }
        return identity
    }

    /// This process's executable path (cheap: no hashing).
    package static var currentPath: String { link("/proc/self/exe") ?? "" }

    /// The application group of the program at `path`: its file name and 64 bits of SHA-256 of
    /// the path, so programs of the same name in different places never share one.
    package static func applicationGroup(path: String) -> String {
        guard !path.isEmpty else { return "keyhaven.default" }
        return applicationGroup(path: path, digest: Data(SHA256.hash(data: Data(path.utf8))))
    }

    /// The application group of the program at `path` named by `digest` (64 bits of it): of its
    /// path (above), or of its executable's contents when its path is not verified (a process in
    /// another mount namespace), so a file mounted over a trusted path in a namespace of its own
    /// never takes that path's group.
    package static func applicationGroup(path: String, digest: Data) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? "program"
        return "\(name).\(Data(digest.prefix(8)).hexString)"
    }

    /// The identity of a program given a descriptor open on its executable (`fd`, -1 if none could
    /// be opened), the path the kernel names, and its starting environment (nil if unreadable).
    /// `traced`: a debugger is attached. `mappings`: the files mapped executable into the process
    /// (nil if unreadable; none for a program that is not running). `root`: "" when the process
    /// runs in this process's mount namespace, else the prefix through which its paths are seen
    /// (`/proc/PID/root`); its path is then not verified.
    package static func identity(executable fd: Int32, path: String, environment: [String: String]?,
                                 traced: Bool = false, mappings: [MappedCode.Mapping]? = [],
                                 root: String = "") -> ApplicationIdentity {
        var file = stat()
        guard fd >= 0, fstat(fd, &file) == 0, let digest = digest(of: fd) else {
            return ApplicationIdentity(path: path, digest: Data(), isProtected: false, isTampered: true,
                                       applicationGroup: applicationGroup(path: path), isPathVerified: false)
        }
        let verified = root.isEmpty && names(path, file)
        var tampered = traced || isTampered(environment)
        if let mappings {
            if MappedCode.foreignCode(mappings, executable: MappedCode.FileID(file), root: root) != nil { tampered = true }
        } else {
            tampered = true
        }
        var identity = ApplicationIdentity(path: path, digest: digest, isProtected: verified && isProtected(file, path: path),
                                           isTampered: tampered,
                                           applicationGroup: verified ? applicationGroup(path: path) : applicationGroup(path: path, digest: digest),
                                           isPathVerified: verified)
        if !verified { identity.groupAsSeen = applicationGroup(path: path) }
        return identity
    }

    /// Whether `path` names the file `file` describes (the same device and inode) in this view.
    static func names(_ path: String, _ file: stat) -> Bool {
        guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return false }
        var named = stat()
        return stat(path, &named) == 0 && named.st_dev == file.st_dev && named.st_ino == file.st_ino
    }

    /// The identity of the program at `path` (security(1)'s `-T`, `SecTrustedApplicationCreateFromPath`).
    package static func application(atPath path: String) throws(StoreError) -> ApplicationIdentity {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.invalidParameter, "no program can be read at \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(.invalidParameter, "\(path) is not a program file")
        }
        let canonical = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        return identity(executable: fd, path: canonical, environment: [:])
    }

    /// `access` with the caller marker replaced by this process and each path given without a
    /// digest hashed: what an item's access object holds when the engine adds it in process.
    package static func resolve(_ access: ItemAccess) throws(StoreError) -> ItemAccess {
        var access = access.namesCaller ? access.resolvingCaller(as: current()) : access
        access.applications = try access.applications.map { (app) throws(StoreError) -> TrustedApplication in
            app.isUnresolved ? TrustedApplication(try application(atPath: app.path)) : app
        }
        return access
    }

    /// The access object a synced copy with `attributes` is given on this device
    /// (``ReplicaAccess``), its programs hashed here; a program not installed here is left out,
    /// so that at worst the copy trusts none. Nil when the copy keeps macOS's rule.
    package static func replicaAccess(for attributes: [String: AttributeValue]) -> ItemAccess? {
        guard var access = ReplicaAccess.access(for: attributes) else { return nil }
        access.applications = access.applications.compactMap { app in
            (try? application(atPath: app.path)).map(TrustedApplication.init)
        }
        return access
    }

    // MARK: The rule's parts

    /// SHA-256 of the file behind `fd`, from its start (cached by the file's identity and times).
    static func digest(of fd: Int32) -> Data? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let key = FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                          modified: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int(info.st_mtim.tv_nsec),
                          changed: Int64(info.st_ctim.tv_sec), changedNanoseconds: Int(info.st_ctim.tv_nsec))
        if let known = digests.withLock({ $0[key] }) { return known }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let read = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if read < 0 && errno == EINTR { continue }
            guard read >= 0 else { return nil }
            if read == 0 { break }
            hasher.update(data: buffer[0..<read])
            offset += off_t(read)
        }
        let digest = Data(hasher.finalize())
        digests.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[key] = digest
        }
        return digest
    }

    /// Whether the user cannot modify the program `file` at `path` (a path ``names(_:_:)``
    /// verified): the user is not root, the file is root's alone, and so is every folder above it
    /// (so it cannot be renamed or replaced).
    static func isProtected(_ file: stat, path: String) -> Bool {
        getuid() != 0 && isRootsProgram(file, path: path)
    }

    /// Whether only root can change the program `file` at `path`: the file is root's alone, and
    /// so is every folder above it. Unlike ``isProtected(_:path:)``, whoever asks, root too.
    package static func isRootsProgram(_ file: stat, path: String) -> Bool {
        isRootsAlone(file) && isProtectedFolder(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]))
    }

    /// Owned by root and writable by nobody else.
    static func isRootsAlone(_ info: stat) -> Bool { info.st_uid == 0 && info.st_mode & 0o022 == 0 }

    /// The folder and each above it owned by root and writable by nobody else.
    static func isProtectedFolder(_ folder: String) -> Bool {
        var current = folder.isEmpty ? "/" : folder
        while true {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, isRootsAlone(info) else { return false }
            if current == "/" { return true }
            let parent = current[..<(current.lastIndex(of: "/") ?? current.startIndex)]
            current = parent.isEmpty ? "/" : String(parent)
        }
    }

    /// Whether the starting environment can load code that is not the program's: `LD_PRELOAD`,
    /// `LD_AUDIT`, or an `LD_LIBRARY_PATH` folder the user can write. Unreadable: yes.
    static func isTampered(_ environment: [String: String]?) -> Bool {
        guard let environment else { return true }
        for name in ["LD_PRELOAD", "LD_AUDIT"] where !(environment[name] ?? "").isEmpty { return true }
        let folders = (environment["LD_LIBRARY_PATH"] ?? "").split(separator: ":", omittingEmptySubsequences: false)
        if environment["LD_LIBRARY_PATH"] != nil {
            for folder in folders {
                // An empty entry is the current folder.
                guard folder.hasPrefix("/"), getuid() != 0, isProtectedFolder(String(folder)) else { return true }
            }
        }
        return false
    }

    package static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
