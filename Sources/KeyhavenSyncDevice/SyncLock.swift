#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// One sync operation at a time per keychain home, across processes (the agent's background
/// loop and a `keyhaven sync now` run side by side): an exclusive `flock` on `sync/lock`, waited
/// for without blocking a thread.
struct SyncLock {
    let path: String

    init(home: KeychainHome) { path = home.path + "/sync/lock" }

    func run<T>(_ body: () async throws(SyncEngineError) -> T) async throws(SyncEngineError) -> T {
        do {
            try FileSecurity.createMissingPrivateDirectories(parentFolder(of: path))
        } catch {
            throw SyncEngineError(.keychain, "the sync folder could not be made: \(error.message)")
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw SyncEngineError(.keychain, "the sync lock \(path) could not be opened") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw SyncEngineError(.keychain, "the sync lock could not be taken") }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                throw SyncEngineError(.server, "cancelled while waiting for another sync to end")
            }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}
