import FoundationEssentials
import Synchronization

/// The user's standing answers to a confirming key's prompt, and each key's last use: what spares
/// the user a prompt per signature without hiding a signature from them.
///
/// A prompt's second button grants one scope: a login to the same host (its verified host key)
/// or a signature in the same SSHSIG namespace, for some minutes; or, for a use with neither, every
/// use by the same process while it runs. A forwarded request matches only an approval given to a
/// forwarded one, and the reverse. Approvals live in the agent's memory only: they end with it,
/// when they expire, when their process exits, or when the user revokes them
/// (`keyhaven ssh approvals --revoke`, Keychain Access).
package final class SSHApprovals: Sendable {
    /// Where an approval holds.
    package enum Scope: Sendable, Hashable {
        /// Logins to the host with this host key (its SHA-256 fingerprint), until the instant.
        case host(fingerprint: String, names: [String], forwarded: Bool, until: ContinuousClock.Instant)
        /// Signatures in this SSHSIG namespace, until the instant.
        case namespace(String, forwarded: Bool, until: ContinuousClock.Instant)
        /// Every use by this process while it runs.
        case process(ProcessMark, chain: String)
    }

    /// One standing approval of one key.
    package struct Approval: Sendable, Hashable, Identifiable {
        package let id: UInt64
        /// The key's SHA-256 fingerprint.
        package let key: String
        package let comment: String
        package let scope: Scope
        package let granted: Date
        /// When it ends by itself, for a scope with minutes.
        package let expires: Date?
    }

    /// The last signature made with one key.
    package struct LastUse: Sendable, Hashable {
        package let key: String
        package let comment: String
        package let at: Date
        /// The process chain that asked ("ssh (1234) ← git ← bash").
        package let by: String
        /// Where it went: "github.com (SHA256:…)", "namespace git", or "no verified destination".
        package let target: String
        /// How it was allowed: "prompt", "approval", or "no prompt" (a key that does not confirm).
        package let allowed: String
    }

    private struct State {
        var approvals: [Approval] = []
        var lastUses: [String: LastUse] = [:]
        var nextID: UInt64 = 1
    }

    private let state = Mutex(State())
    /// The most approvals kept at once; the oldest go first.
    package static let maximumApprovals = 256
    /// The most keys whose last use is kept.
    package static let maximumKeys = 1024

    package init() {}

    /// The scope the prompt's second button grants for `use`, for `minutes`: the host or the
    /// namespace when the use has one, else the process. Nil when `minutes` is 0 and the use
    /// has a host or namespace (the agent then offers no standing approval for those).
    package static func scope(for use: KeyUse, process: ProcessMark, chain: String, hostNames: [String], minutes: Int,
                              now: ContinuousClock.Instant = .now) -> Scope? {
        let until = now + .seconds(minutes * 60)
        if let namespace = use.namespace {
            return minutes > 0 ? .namespace(namespace, forwarded: use.forwarded, until: until) : nil
        }
        if let destination = use.destination {
            return minutes > 0 ? .host(fingerprint: destination.hostKey.fingerprint, names: hostNames, forwarded: use.forwarded, until: until) : nil
        }
        return .process(process, chain: chain)
    }

    /// What the prompt's second button says for `scope`.
    package static func buttonLabel(for scope: Scope, minutes: Int) -> String {
        switch scope {
        case .host(_, let names, _, _):
            "Allow \(names.first.map(Self.shortened) ?? "this host") for \(minutes) min"
        case .namespace(let namespace, _, _):
            namespace == "git" ? "Allow git signing for \(minutes) min" : "Allow \"\(Self.shortened(namespace))\" for \(minutes) min"
        case .process:
            "Allow this process"
        }
    }

    /// The approval that covers `use` by `process`, if one does; expired approvals and those of
    /// processes `alive` no longer finds are dropped first.
    package func approval(for use: KeyUse, process: ProcessMark, alive: (ProcessMark) -> Bool,
                          now: ContinuousClock.Instant = .now) -> Approval? {
        let key = SSHPublicKey.fingerprint(of: use.publicBlob)
        return state.withLock { state in
            Self.prune(&state, alive: alive, now: now)
            return state.approvals.first { $0.key == key && Self.covers($0.scope, use, process) }
        }
    }

    private static func covers(_ scope: Scope, _ use: KeyUse, _ process: ProcessMark) -> Bool {
        switch scope {
        case .host(let fingerprint, _, let forwarded, _):
            use.namespace == nil && use.destination?.hostKey.fingerprint == fingerprint && use.forwarded == forwarded
        case .namespace(let namespace, let forwarded, _):
            use.namespace == namespace && use.forwarded == forwarded
        case .process(let mark, _):
            mark == process
        }
    }

    /// Grants `scope` for the key of `use`.
    @discardableResult
    package func grant(_ scope: Scope, for use: KeyUse, now: ContinuousClock.Instant = .now) -> Approval {
        let expires: Date? = switch scope {
        case .host(_, _, _, let until), .namespace(_, _, let until): Date.now.addingTimeInterval(Self.seconds(until - now))
        case .process: nil
        }
        return state.withLock { state in
            let approval = Approval(id: state.nextID, key: SSHPublicKey.fingerprint(of: use.publicBlob), comment: use.comment,
                                    scope: scope, granted: .now, expires: expires)
            state.nextID += 1
            state.approvals.append(approval)
            if state.approvals.count > Self.maximumApprovals { state.approvals.removeFirst(state.approvals.count - Self.maximumApprovals) }
            return approval
        }
    }

    /// The approvals in force, oldest first.
    package func current(alive: (ProcessMark) -> Bool, now: ContinuousClock.Instant = .now) -> [Approval] {
        state.withLock { state in
            Self.prune(&state, alive: alive, now: now)
            return state.approvals
        }
    }

    /// Revokes the approval `id`; whether there was one.
    package func revoke(_ id: UInt64) -> Bool {
        state.withLock { state in
            guard let index = state.approvals.firstIndex(where: { $0.id == id }) else { return false }
            state.approvals.remove(at: index)
            return true
        }
    }

    /// Revokes every approval; how many there were.
    package func revokeAll() -> Int {
        state.withLock { state in
            defer { state.approvals.removeAll() }
            return state.approvals.count
        }
    }

    /// Notes a signature made with the key of `use`.
    package func recordUse(_ use: KeyUse, by chain: String, target: String, allowed: String) {
        let key = SSHPublicKey.fingerprint(of: use.publicBlob)
        let last = LastUse(key: key, comment: use.comment, at: .now, by: chain, target: target, allowed: allowed)
        state.withLock { state in
            state.lastUses[key] = last
            if state.lastUses.count > Self.maximumKeys, let oldest = state.lastUses.values.min(by: { $0.at < $1.at }) {
                state.lastUses[oldest.key] = nil
            }
        }
    }

    /// Each key's last use, the latest first.
    package func lastUses() -> [LastUse] {
        state.withLock { $0.lastUses.values.sorted { $0.at > $1.at } }
    }

    /// Where `use` goes, in words for the record: the host's known names and fingerprint, the
    /// namespace, or that it has no verified destination.
    package static func target(of use: KeyUse, hostNames: [String]) -> String {
        let forwarded = use.forwarded ? ", forwarded" : ""
        if let namespace = use.namespace { return "namespace \(SSHUseDescription.shown(namespace))\(forwarded)" }
        if let destination = use.destination {
            let names = hostNames.map(SSHUseDescription.shown).joined(separator: ", ")
            return "\(names.isEmpty ? "" : names + " ")(\(destination.hostKey.fingerprint))\(forwarded)"
        }
        return "no verified destination\(forwarded)"
    }

    private static func prune(_ state: inout State, alive: (ProcessMark) -> Bool, now: ContinuousClock.Instant) {
        state.approvals.removeAll { approval in
            switch approval.scope {
            case .host(_, _, _, let until), .namespace(_, _, let until): until <= now
            case .process(let mark, _): !alive(mark)
            }
        }
    }

    private static func shortened(_ text: String) -> String {
        let shown = SSHUseDescription.shown(text)
        return shown.count > 40 ? String(shown.prefix(39)) + "…" : shown
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A process as the kernel numbers it: its pid and its start time (clock ticks after boot), so a
/// later process given the same pid is not taken for it.
package struct ProcessMark: Sendable, Hashable {
    package let pid: Int32
    package let started: UInt64

    package init(pid: Int32, started: UInt64) {
        (self.pid, self.started) = (pid, started)
    }
}
