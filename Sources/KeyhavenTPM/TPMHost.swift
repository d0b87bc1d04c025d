#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The agent's one connection to the TPM, made on first use and kept (a software TPM serves one
/// connection at a time: the agent holds it, and every other use goes through the agent). A
/// connection that fails is dropped, and the next use connects again: a TPM that comes back, or
/// a resource manager restarted, is found without restarting the agent.
package final class TPMHost: Sendable {
    private let connection = Mutex<TPMConnection?>(nil)
    private let tcti: @Sendable () -> String

    /// `tcti`: where the TPM is, read at each connection (``TPMConnection/configured``).
    package init(tcti: @escaping @Sendable () -> String = { TPMConnection.configured }) {
        self.tcti = tcti
        // tpm2-tss logs each failure to standard error; the agent reports them itself, as errors
        // its clients see. TSS2_LOG set by the user still wins.
        setenv("TSS2_LOG", "all+none", 0)
    }

    /// Runs `body` with the connection, one caller at a time. A connection whose handles went
    /// stale (another program flushed the storage key, the TPM ran out of room for objects) is
    /// dropped and `body` runs once more on a new one; one that fails is dropped.
    package func use<T: Sendable>(_ body: (TPMConnection) throws(TPMError) -> T) throws(TPMError) -> T {
        try connection.withLock { (held) throws(TPMError) -> T in
            var retried = false
            while true {
                let current: TPMConnection
                if let held { current = held } else { current = try TPMConnection(tcti: tcti()) }
                held = current
                do throws(TPMError) {
                    return try body(current)
                } catch {
                    if error.code == .unreachable || error.code == .resources { held = nil }
                    guard error.code == .resources, !retried else { throw error }
                    retried = true
                }
            }
        }
    }

    /// Flushes what the connection loaded (the storage key) and closes it: the agent's last use,
    /// so that a TPM without a resource manager keeps no object of an agent that has stopped.
    package func close() {
        connection.withLock { $0 = nil }
    }
}
