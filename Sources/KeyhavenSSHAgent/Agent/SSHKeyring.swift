#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import FoundationEssentials
import Synchronization

/// The keys one agent holds, with their constraints, and its lock (`ssh-add -x`).
///
/// Keys live in memory only, as OpenSSH's agent holds them: each is a swift-crypto key
/// (``SSHSigningKey``) whose material BoringSSL zeroes when the key is dropped. A key with a
/// lifetime is forgotten when the lifetime ends; a locked keyring lists nothing and signs nothing
/// until it is unlocked with the same passphrase.
package final class SSHKeyring: Sendable {
    /// A key the keyring holds.
    package struct HeldKey: Sendable {
        package let key: SSHSigningKey
        package let comment: String
        /// When the key is forgotten (`ssh-add -t`, or the agent's `-t`).
        package let expiry: ContinuousClock.Instant?
        /// Whether each use asks the user first (`ssh-add -c`).
        package let confirm: Bool
        /// The hops the key may be used on (`ssh-add -h`); empty: anywhere.
        package let destinations: [DestinationConstraint]
    }

    /// What an add request's constraints ask for.
    package struct Options: Sendable {
        package var lifetime: UInt32?
        package var confirm = false
        package var destinations: [DestinationConstraint] = []
    }

    private struct State {
        var keys: [HeldKey] = []
        /// The lock's salt and the passphrase's HMAC under it, while locked.
        var lock: (salt: SymmetricKey, mac: HashedAuthenticationCode<SHA256>)?
        /// Wrong passphrases since the last unlock: each waits a tenth of a second more.
        var failedUnlocks = 0
    }

    private let state = Mutex(State())
    /// The lifetime of a key added without one (`keyhaven-ssh-agent -t`), in seconds.
    package let defaultLifetime: UInt32?

    package init(defaultLifetime: UInt32? = nil) { self.defaultLifetime = defaultLifetime }

    /// The keys held now (none while locked), in the order they were added.
    package func keys(at now: ContinuousClock.Instant = .now) -> [HeldKey] {
        state.withLock { state in
            Self.forgetExpired(&state, now)
            return state.lock == nil ? state.keys : []
        }
    }

    /// The key whose public blob (or certificate's) is `blob`, unless locked.
    package func key(blob: [UInt8], at now: ContinuousClock.Instant = .now) -> HeldKey? {
        keys(at: now).first { $0.key.publicBlob == blob }
    }

    /// Holds the key an add request carries. A key already held is replaced, with the new
    /// constraints (as OpenSSH's agent does). Constraints the agent cannot honour refuse the add:
    /// a key the user asked to restrict must never be held unrestricted.
    package func add(_ added: AgentRequest.AddedKey, at now: ContinuousClock.Instant = .now) throws(SSHAgentError) {
        let options = try Self.options(of: added, defaultLifetime: defaultLifetime)
        let key = try SSHSigningKey(added.key)
        let held = HeldKey(key: key, comment: added.comment, expiry: options.lifetime.map { now + .seconds(Int64($0)) },
                           confirm: options.confirm, destinations: options.destinations)
        try state.withLock { (state: inout State) throws(SSHAgentError) in
            guard state.lock == nil else { throw SSHAgentError(.locked, "the agent is locked") }
            Self.forgetExpired(&state, now)
            if let index = state.keys.firstIndex(where: { $0.key.publicBlob == key.publicBlob }) {
                state.keys[index] = held
            } else {
                state.keys.append(held)
            }
        }
    }

    /// The lifetime, confirmation and destinations an add request's constraints ask for.
    /// Constraints the agent cannot honour refuse the add.
    package static func options(of added: AgentRequest.AddedKey, defaultLifetime: UInt32?) throws(SSHAgentError) -> Options {
        var options = Options(lifetime: defaultLifetime)
        for constraint in added.constraints {
            switch constraint {
            case .lifetime(let seconds): options.lifetime = seconds
            case .confirm: options.confirm = true
            case .restrictDestination(let content):
                guard options.destinations.isEmpty else { throw SSHAgentError(.malformed, "destination constraints given twice") }
                options.destinations = try DestinationConstraint.read(content)
            case .associatedCertificates, .securityKeyProvider:
                throw SSHAgentError(.unsupported, "the agent holds no security-key or token keys")
            }
        }
        return options
    }

    /// Forgets the key named by `blob`; false when none is held (or the keyring is locked).
    package func remove(blob: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.lock == nil, let index = state.keys.firstIndex(where: { $0.key.publicBlob == blob }) else { return false }
            state.keys.remove(at: index)
            return true
        }
    }

    /// Forgets every key; false while locked.
    @discardableResult
    package func removeAll() -> Bool {
        state.withLock { state in
            guard state.lock == nil else { return false }
            state.keys.removeAll()
            return true
        }
    }

    /// Locks with `passphrase`; false when already locked.
    package func lock(passphrase: SecretBytes) -> Bool {
        let salt = SymmetricKey(size: .bits256)
        let mac = passphrase.withBytes { HMAC<SHA256>.authenticationCode(for: $0, using: salt) }
        return state.withLock { state in
            guard state.lock == nil else { return false }
            state.lock = (salt, mac)
            return true
        }
    }

    /// Unlocks when `passphrase` is the one the keyring was locked with (compared in constant
    /// time); false otherwise, or when not locked. A wrong passphrase answers late, a tenth of a
    /// second more for each (up to ten seconds), so that guessing it through the socket is slow.
    package func unlock(passphrase: SecretBytes) -> Bool {
        let (matches, failures) = state.withLock { state -> (Bool, Int) in
            guard let lock = state.lock else { return (false, 0) }
            let matches = passphrase.withBytes { HMAC<SHA256>.isValidAuthenticationCode(lock.mac, authenticating: $0, using: lock.salt) }
            if matches { (state.lock, state.failedUnlocks) = (nil, 0) } else { state.failedUnlocks = min(state.failedUnlocks + 1, 100) }
            return (matches, state.failedUnlocks)
        }
        if !matches && failures > 0 { usleep(UInt32(failures) * 100_000) }
        return matches
    }

    package var isLocked: Bool { state.withLock { $0.lock != nil } }

    private static func forgetExpired(_ state: inout State, _ now: ContinuousClock.Instant) {
        state.keys.removeAll { $0.expiry.map { $0 <= now } ?? false }
    }
}
