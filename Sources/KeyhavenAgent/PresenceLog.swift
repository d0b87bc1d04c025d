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
/// Biometry is fprintd's (``FingerprintReader``): `.biometryAny` and `.biometryCurrentSet` ask
/// for a finger; `.userPresence` is biometry or the keychain's password, as on a Mac;
/// `.devicePasscode` and `.applicationPassword` ask for the password; `.or` and `.and` combine
/// them as Apple does. A paired watch (`.companion`) is never there.
package final class PresenceLog: Sendable {
    package enum Requirement: Equatable {
        case none
        /// The keychain's password.
        case password
        /// A finger (`currentSet`: only while the enrolled fingers are those the item was added with).
        case biometry(currentSet: Bool)
        case biometryOrPassword(currentSet: Bool)
        case biometryAndPassword(currentSet: Bool)
        /// What no one can give here (a paired watch alone).
        case unavailable

        /// Whether biometry counts only with the fingers enrolled when the item was added.
        package var asksForCurrentSet: Bool {
            switch self {
            case .biometry(let currentSet), .biometryOrPassword(let currentSet), .biometryAndPassword(let currentSet): return currentSet
            default: return false
            }
        }
    }

    private struct Key: Hashable { let pid: Int32, digest: Data, keychain: String }
    private let stamps = Mutex<[Key: Double]>([:])

    package init() {}

    package func requirement(_ item: StoredItem) -> Requirement { requirement(flags: item.accessControlFlags) }

    /// What access-control flags (`SecAccessControlCreateFlags`) ask for.
    package func requirement(flags: UInt64?) -> Requirement {
        guard let flags else { return .none }
        let userPresence: UInt64 = 1 << 0, passcode: UInt64 = 1 << 4 | 1 << 31   // devicePasscode, applicationPassword
        let biometryAny: UInt64 = 1 << 1, currentSetFlag: UInt64 = 1 << 3, companion: UInt64 = 1 << 5, or: UInt64 = 1 << 14
        let currentSet = flags & currentSetFlag != 0
        let biometry = flags & (biometryAny | currentSetFlag) != 0
        let password = flags & passcode != 0
        if flags & userPresence != 0 {
            // Biometry or the password, whatever else is asked.
            return .biometryOrPassword(currentSet: currentSet)
        }
        switch (biometry, password) {
        case (false, false): return flags & companion != 0 ? .unavailable : .none
        case (false, true): return flags & companion != 0 && flags & or == 0 ? .unavailable : .password
        case (true, false): return .biometry(currentSet: currentSet)
        case (true, true): return flags & or != 0 ? .biometryOrPassword(currentSet: currentSet) : .biometryAndPassword(currentSet: currentSet)
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
