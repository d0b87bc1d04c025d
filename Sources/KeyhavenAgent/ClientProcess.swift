#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import FoundationEssentials
import KeyhavenAgentClient
import KeychainModel
import KeychainStore
import Synchronization

/// The process at the other end of one connection, as the kernel knows it (docs/access.md,
/// "Which program is asking").
///
/// The pid comes from the socket (SO_PEERCRED, or the bus's credentials for a D-Bus peer) and is
/// pinned by a pidfd: the socket's own (SO_PEERPIDFD) where the kernel has it, else one opened on
/// the pid at once. The executable is pinned when the connection is accepted (or the bus peer
/// appears), by the device and inode of `/proc/PID/exe`, before the client can send anything: a
/// process that runs another program after that (execve keeps the connection) is tampered for the
/// rest of the connection, whatever it runs, because requests on a connection kept across execve
/// may be written by a child forked before it, which shares the connection. (macOS tells them
/// apart by the audit token's pid version, which execve changes.) The digest is computed at the
/// first request that needs it, through a descriptor of the executable that must be the pinned
/// file. A debugger attached since, or code mapped since that the program's file does not vouch
/// for, makes it tampered too.
package final class ClientProcess: Sendable {
    package let pid: Int32
    private let pidfd: Int32
    private struct Known: Sendable {
        var identity: ApplicationIdentity
        var executable: MappedCode.FileID
        /// When `TracerPid` and the mappings were last read (``MonotonicClock``). A reading that
        /// names a tracer, or a mapping of foreign code, makes `identity` tampered for good.
        var tracerReadAt: UInt64
        /// The files mapped executable at the last reading (each checked).
        var mappings: Set<MappedCode.Mapping>
    }
    /// How long a reading of `TracerPid` and the mappings stands (docs/access.md: the kernel alone
    /// takes about a third of a look-up's time to make the status file, and a tracer that detaches
    /// before a request passes any reading).
    static let tracerReadingLifetime: UInt64 = 500_000_000
    private let known = Mutex<Known?>(nil)
    /// Whether the executable was read before on this connection (even if that reading failed).
    private let readBefore = Atomic<Bool>(false)
    /// The executable pinned at accept: its device and inode (nil: the process was gone). The
    /// process holds its executable, so no other file takes that inode while it runs.
    private let pinned: MappedCode.FileID?
    /// Set when the connection itself is suspect (``ConnectionHolders``): tampered for good.
    private let suspect = Atomic<Bool>(false)
    /// What this request was allowed once by the user (cleared for each request).
    private let allowance = Mutex(Allowance())

    package struct Allowance: Sendable {
        var items: Set<PersistentReference> = []
        var groups: Set<String> = []
        /// Keychains whose items' presence the user confirmed for this request.
        var presence: Set<String> = []
    }

    /// Pins the process and the executable it runs now.
    package init(pid: Int32, pidfd: Int32) {
        self.pid = pid
        self.pidfd = pidfd
        var info = stat()
        pinned = stat("/proc/\(pid)/exe", &info) == 0 && Self.isAlive(pid, pidfd) ? MappedCode.FileID(info) : nil
    }

    deinit { if pidfd >= 0 { close(pidfd) } }

    /// A pidfd for `pid`, or -1 (pidfd_open(2)).
    package static func openPidfd(_ pid: Int32) -> Int32 { kh_pidfd_open(pid) }

    /// The pidfd, for waiting on the process's exit (readable when it has exited).
    package var exitDescriptor: Int32 { pidfd }

    /// Whether the process still runs: its pidfd is not readable (a zombie has exited); without a
    /// pidfd, kill(2) with signal 0.
    package var isAlive: Bool { Self.isAlive(pid, pidfd) }

    private static func isAlive(_ pid: Int32, _ pidfd: Int32) -> Bool {
        pidfd >= 0 ? kh_pidfd_alive(pidfd) == 0 : kill(pid, 0) == 0
    }

    /// The executable pinned at accept, nil when none could be.
    package var pinnedExecutable: MappedCode.FileID? { pinned }

    /// Marks the connection suspect: no program is identified on it (``ConnectionHolders``).
    package func markSuspect() {
        suspect.store(true, ordering: .relaxed)
        known.withLock { $0?.identity.isTampered = true }
    }

    /// Whether the client runs in the agent's mount namespace (where its paths are the agent's).
    var sharesMountNamespace: Bool {
        guard let own = Self.ownMountNamespace, let theirs = ApplicationIdentityReader.link("/proc/\(pid)/ns/mnt") else { return false }
        return own == theirs
    }

    private static let ownMountNamespace = ApplicationIdentityReader.link("/proc/self/ns/mnt")

    /// The files mapped executable into the process; nil when unreadable.
    var mappings: [MappedCode.Mapping]? {
        ProcessFile.read("/proc/\(pid)/maps", whole: true).map(MappedCode.executableMappings)
    }

    /// The identity of the program the process runs now; tampered when it is not the program
    /// pinned at accept, when it is read again on this connection (it ran another program since
    /// the first reading, or that reading failed: a program that made its own file unreadable and
    /// then ran another is no exception), or when the connection is suspect.
    package func identity() -> ApplicationIdentity {
        if let identity = knownIdentity() { return identity }
        let ranAnotherProgram = readBefore.exchange(true, ordering: .relaxed)
        let exePath = "/proc/\(pid)/exe"
        let fd = open(exePath, O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { close(fd) } }
        let path = ApplicationIdentityReader.link(exePath) ?? ""
        var opened = stat()
        let file = fd >= 0 && fstat(fd, &opened) == 0 ? MappedCode.FileID(opened) : nil
        let root = sharesMountNamespace ? "" : "/proc/\(pid)/root"
        let mappings = self.mappings
        var identity = ApplicationIdentityReader.identity(executable: fd, path: path, environment: environment, traced: isTraced,
                                                          mappings: mappings, root: root)
        if ranAnotherProgram || suspect.load(ordering: .relaxed) { identity.isTampered = true }
        // A Flatpak app, when its executable is that app's (``FlatpakSandbox``): known by its id.
        if !root.isEmpty, let file, let sandbox = FlatpakSandbox.of(pid: pid), sandbox.runs(executablePath: path, file: file) {
            identity.groupAsSeen = ApplicationIdentityReader.applicationGroup(path: path)
            identity.path = sandbox.identityPath
            identity.applicationGroup = sandbox.applicationGroup
            identity.isProtected = true
            identity.isPathVerified = true
        }
        // Read after the descriptor was opened: alive now means the pid was this process all along;
        // the program it runs is the one pinned at accept, else it ran another since.
        guard let file, file == pinned, isAlive else {
            identity.isTampered = true
            return identity
        }
        known.withLock {
            $0 = Known(identity: identity, executable: file, tracerReadAt: MonotonicClock.nanoseconds(),
                       mappings: Set(mappings ?? []))
        }
        return identity
    }

    /// The identity read before, if the process still runs that same executable (checked as
    /// ``identity()`` checks it, with a debugger attached or foreign code mapped since making it
    /// tampered); nil when it must be read anew (hashing the executable).
    package func knownIdentity() -> ApplicationIdentity? {
        var info = stat()
        guard stat("/proc/\(pid)/exe", &info) == 0, isAlive, var current = known.withLock({ $0 }),
              current.executable == MappedCode.FileID(info) else { return nil }
        let now = MonotonicClock.nanoseconds()
        if now &- current.tracerReadAt >= Self.tracerReadingLifetime {
            var tampered = isTraced
            let mapped = mappings.map(Set.init)
            if let mapped, mapped != current.mappings {
                let added = Array(mapped.subtracting(current.mappings))
                let root = sharesMountNamespace ? "" : "/proc/\(pid)/root"
                if MappedCode.foreignCode(added, executable: current.executable, root: root) != nil { tampered = true }
            } else if mapped == nil {
                tampered = true
            }
            if tampered { current.identity.isTampered = true }
            known.withLock { known in
                known?.tracerReadAt = now
                if let mapped { known?.mappings = mapped }
                if tampered { known?.identity.isTampered = true }
            }
        }
        return current.identity
    }

    /// The starting environment (`/proc/PID/environ`); nil if unreadable.
    package var environment: [String: String]? {
        guard let bytes = ProcessFile.read("/proc/\(pid)/environ") else { return nil }
        var environment: [String: String] = [:]
        for entry in bytes.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            environment[String(decoding: entry[entry.startIndex..<equals], as: UTF8.self)] =
                String(decoding: entry[(equals + 1)...], as: UTF8.self)
        }
        return environment
    }

    /// Whether a debugger is attached (`TracerPid` in `/proc/PID/status`); unreadable: yes.
    package var isTraced: Bool {
        guard let bytes = ProcessFile.read("/proc/\(pid)/status") else { return true }
        return Self.namesTracer(status: bytes)
    }

    private static let tracerLabel = Array("TracerPid:".utf8)

    /// Whether the `TracerPid:` line of a status file names a tracer (any value but 0); a file
    /// without the line names none. Scanned in place, not split into its fifty-odd lines, so that
    /// a reading costs little more than reading the file. A client that calls less often than
    /// ``tracerReadingLifetime`` pays one a request.
    package static func namesTracer(status: [UInt8]) -> Bool {
        let label = tracerLabel
        var start = 0
        while start < status.count {
            let end = status[start...].firstIndex(of: UInt8(ascii: "\n")) ?? status.count
            if end - start >= label.count && status[start..<(start + label.count)].elementsEqual(label) {
                let value = status[(start + label.count)..<end].filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                return value != [UInt8(ascii: "0")]
            }
            start = end + 1
        }
        return false
    }

    /// The process's terminal: the first of its standard descriptors that is one.
    package var terminal: String? {
        for fd in 0...2 {
            guard let target = ApplicationIdentityReader.link("/proc/\(pid)/fd/\(fd)") else { continue }
            if target.hasPrefix("/dev/pts/") || target.hasPrefix("/dev/tty") || target == "/dev/console" { return target }
        }
        return nil
    }

    // MARK: Allowed once

    package func beginRequest() { allowance.withLock { $0 = Allowance() } }
    package func allowOnce(items: [PersistentReference] = [], groups: [String] = [], presence keychain: String? = nil) {
        allowance.withLock {
            $0.items.formUnion(items)
            $0.groups.formUnion(groups)
            if let keychain { $0.presence.insert(keychain) }
        }
    }
    package var allowed: Allowance { allowance.withLock { $0 } }
}
