#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeyhavenAgentClient
import KeychainModel
import Synchronization

/// Items whose access control asks for the user's presence (`SecAccessControlCreateFlags`), and
/// when each client process last gave it, per keychain: one password entry serves the same process
/// for the reuse duration it asked for (`SecUserPresenceSetReuseDuration`, LAContext's model).
///
/// This machine has no biometry: a constraint that only biometry or a paired watch could meet
/// fails as on a device with none enrolled (errSecAuthFailed); `.userPresence` (biometry or
/// passcode), `.devicePasscode` and `.applicationPassword` ask for the keychain's password.
package final class PresenceLog: Sendable {
    enum Requirement: Equatable { case none, password, unavailable }

    private struct Key: Hashable { let pid: Int32, digest: Data, keychain: String }
    private let stamps = Mutex<[Key: Double]>([:])

    func requirement(_ item: StoredItem) -> Requirement {
        guard let flags = item.accessControlFlags else { return .none }
        let password: UInt64 = 1 << 0 | 1 << 4 | 1 << 31   // userPresence, devicePasscode, applicationPassword
        let unavailable: UInt64 = 1 << 1 | 1 << 3 | 1 << 5  // biometryAny, biometryCurrentSet, companion
        let or: UInt64 = 1 << 14
        switch (flags & password != 0, flags & unavailable != 0) {
        case (false, false): return .none
        case (true, false): return .password
        case (false, true): return .unavailable
        case (true, true): return flags & or != 0 ? .password : .unavailable
        }
    }

    func isFresh(client: ClientProcess, identity: ApplicationIdentity, keychain: String, reuse: UInt32) -> Bool {
        guard reuse > 0, let stamp = stamps.withLock({ $0[Key(pid: client.pid, digest: identity.digest, keychain: keychain)] }) else {
            return false
        }
        return MonotonicClock.seconds() - stamp <= Double(min(reuse, 300))
    }

    func record(client: ClientProcess, identity: ApplicationIdentity, keychain: String) {
        let now = MonotonicClock.seconds()
        stamps.withLock { stamps in
            if stamps.count > 4096 { stamps = stamps.filter { now - $0.value <= 300 } }
            stamps[Key(pid: client.pid, digest: identity.digest, keychain: keychain)] = now
        }
    }
}
