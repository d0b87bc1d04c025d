#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import KeychainStore

/// What the agent does to its own process before it holds a key or a password: no core file,
/// not dumpable (so the user's other processes cannot ptrace it or read `/proc/PID/mem`), and
/// every freed heap block overwritten, so a buffer that carried a password or a secret does not
/// linger after it is freed (docs/threat-model.md, "The agent's memory").
package enum ProcessHardening {
    /// The glibc tunable that switches off the per-thread cache of freed blocks, which skips the
    /// overwrite (`M_PERTURB`) that every other free gets.
    static let tunable = "glibc.malloc.tcache_count=0"
    /// What freed memory is overwritten with.
    static let wipeByte: Int32 = 0xA5

    /// Re-executes this program with ``tunable`` in `GLIBC_TUNABLES` unless it is there already
    /// (glibc reads tunables only at start). Returns when it is there, or when re-executing failed.
    package static func restartWithoutThreadCache() {
        let current = environmentVariable("GLIBC_TUNABLES") ?? ""
        guard !current.split(separator: ":").contains(Substring(tunable)) else { return }
        setenv("GLIBC_TUNABLES", current.isEmpty ? tunable : current + ":" + tunable, 1)
        // The executable's own path, not /proc/self/exe: the process keeps its name (`ps`, `pgrep`).
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return }
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self), arguments)
        // Still here: run as we are, with the overwrite of the blocks that do not go to the cache.
    }

    /// Core limit zero, not dumpable, freed memory overwritten; `.notAvailable` if the process
    /// could not be made undumpable (the agent then refuses to start).
    package static func apply() throws(StoreError) {
        guard kh_make_undumpable() == 0 else {
            throw StoreError(.notAvailable, "cannot make keyhavend undumpable: \(String(cString: strerror(errno)))")
        }
        _ = kh_wipe_freed_memory(wipeByte)
    }

    /// Makes the process dumpable again: for a keyhavend that hands the Secret Service over to the
    /// running agent and so never holds a key, since that agent must read which program it runs.
    package static func allowInspection() { _ = kh_make_dumpable() }

    /// Whether this process is dumpable now.
    package static var isDumpable: Bool { kh_is_dumpable() != 0 }
}
