import KeyhavenSyncCore
import Synchronization

/// The long polls waiting in this server process, woken by the changes PostgreSQL announces
/// (``ChangeListener``), and what the process may answer them without asking the database.
///
/// A push notifies in its own transaction, so the notification is delivered when the push commits,
/// to every instance listening. A poll registers its ``Waiter`` *before* it looks at the database,
/// so a change that commits after the look wakes it, whichever instance took the push.
///
/// While the listening connection is up, an account's head and its devices' keys, once read, are
/// kept until a notification for that account arrives: an idle device renewing its poll costs no
/// query. They are dropped at once when the connection drops (a notification may have been
/// missed), and nothing is kept until it listens again; meanwhile polls look at the database every
/// ``fallbackInterval``.
package final class Wakeups: Sendable {
    /// What a poll waits for: one account's log, or one side of a pairing slot.
    package enum Topic: Hashable, Sendable {
        case account(AccountID)
        case pairing(slot: [UInt8], side: Int)

        /// The notification's payload: `a` and the account id, or `p`, the slot and the side, in hex.
        package var payload: String {
            switch self {
            case .account(let account): return "a" + account.hex
            case .pairing(let slot, let side): return "p" + Hex.encode(slot) + String(side)
            }
        }

        package init?(payload: String) {
            guard let kind = payload.first else { return nil }
            let rest = payload.dropFirst()
            switch kind {
            case "a":
                guard let account = AccountID(hex: String(rest)) else { return nil }
                self = .account(account)
            case "p":
                guard rest.count == 65, let slot = Hex.decode(String(rest.prefix(64))), let side = Int(String(rest.suffix(1))),
                      side == 0 || side == 1 else { return nil }
                self = .pairing(slot: slot, side: side)
            default:
                return nil
            }
        }
    }

    /// One poll's registration: signalled by a change of its topic, a change of the listener, or
    /// the server stopping.
    package final class Waiter: Sendable {
        let id: UInt64
        let topic: Topic
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation

        init(id: UInt64, topic: Topic) {
            (self.id, self.topic) = (id, topic)
            (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        }

        /// Waits for a signal, at most until `deadline`.
        package func wait(until deadline: ContinuousClock.Instant) async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in self.stream { return } }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    private struct Entry {
        var waiter: Waiter
        var signalled: Bool
        /// A poll (``openPolls``), or only a guard on what a look may keep (an authentication).
        var isPoll: Bool
    }

    private struct Known<Value> {
        var value: Value
        var used: ContinuousClock.Instant
    }

    private struct State {
        var nextID: UInt64 = 0
        var waiters: [Topic: [UInt64: Entry]] = [:]
        var count = 0
        var listening = false
        var stopping = false
        var heads: [AccountID: Known<LogHead>] = [:]
        var keys: [AccountID: Known<[DeviceID: DevicePublicKeys]>] = [:]
        var lastSweep = ContinuousClock.now

        /// Whether anything signalled `waiter` since it registered; a waiter gone counts as signalled.
        func isSignalled(_ waiter: Waiter) -> Bool {
            waiters[waiter.topic]?[waiter.id]?.signalled ?? true
        }

        /// The value kept under `key`, marked as used now.
        static func use<Key: Hashable, Value>(_ key: Key, in kept: inout [Key: Known<Value>]) -> Value? {
            guard var known = kept[key] else { return nil }
            known.used = .now
            kept[key] = known
            return known.value
        }

        mutating func signal(_ topic: Topic) {
            guard var entries = waiters[topic] else { return }
            for (id, entry) in entries where !entry.signalled {
                entries[id]?.signalled = true
                entry.waiter.continuation.yield()
            }
            waiters[topic] = entries
        }

        mutating func signalAll() {
            for topic in Array(waiters.keys) { signal(topic) }
        }

        mutating func forget(_ topic: Topic) {
            if case .account(let account) = topic {
                heads[account] = nil
                keys[account] = nil
            }
        }

        /// Drops what was not used for a while, so accounts no device polls any more leave.
        mutating func sweep(_ now: ContinuousClock.Instant, after age: Duration) {
            guard now - lastSweep > age else { return }
            lastSweep = now
            heads = heads.filter { now - $0.value.used < age }
            keys = keys.filter { now - $0.value.used < age }
        }
    }

    /// How often a poll looks at the database while nothing is listening.
    package let fallbackInterval: Duration
    private let state = Mutex(State())
    private let metrics: SyncMetrics
    /// Kept this long unused: past a device's renewal of its poll.
    private static let keptFor: Duration = .seconds(SyncService.maximumWait * 4)

    package init(fallbackInterval: Duration = .seconds(1), metrics: SyncMetrics = SyncMetrics()) {
        (self.fallbackInterval, self.metrics) = (fallbackInterval, metrics)
    }

    /// Registers a poll on `topic`: it is signalled by any change from now on. `isPoll` false: a
    /// registration that only guards what a look at the database may keep (not counted as a poll).
    package func register(_ topic: Topic, isPoll: Bool = true) -> Waiter {
        let waiter = state.withLock { state in
            state.nextID += 1
            let waiter = Waiter(id: state.nextID, topic: topic)
            state.waiters[topic, default: [:]][waiter.id] = Entry(waiter: waiter, signalled: state.stopping, isPoll: isPoll)
            if isPoll { state.count += 1 }
            return waiter
        }
        if isPoll { metrics.openPolls.increment() }
        return waiter
    }

    package func unregister(_ waiter: Waiter) {
        let removed = state.withLock { state -> Entry? in
            guard let entry = state.waiters[waiter.topic]?.removeValue(forKey: waiter.id) else { return nil }
            if state.waiters[waiter.topic]?.isEmpty == true { state.waiters[waiter.topic] = nil }
            if entry.isPoll { state.count -= 1 }
            return entry
        }
        waiter.continuation.finish()
        if removed?.isPoll == true { metrics.openPolls.decrement() }
    }

    /// Whether anything signalled `waiter` since it registered (a change of its topic, of the
    /// listener, or the server stopping).
    package func wasSignalled(_ waiter: Waiter) -> Bool {
        state.withLock { $0.isSignalled(waiter) }
    }

    /// The polls registered now.
    package var openPolls: Int { state.withLock { $0.count } }

    /// Whether polls wait for notifications (rather than look every ``fallbackInterval``).
    package var isListening: Bool { state.withLock { $0.listening } }

    /// Whether the server is stopping: polls answer with what they have.
    package var isStopping: Bool { state.withLock { $0.stopping } }

    /// How long a poll that found nothing waits before it looks again.
    package func nextLook(before deadline: ContinuousClock.Instant) -> ContinuousClock.Instant {
        isListening ? deadline : min(deadline, .now + fallbackInterval)
    }

    /// A notification's payload arrived: its topic's polls wake, and what was kept of its account
    /// is dropped.
    package func deliver(_ payload: String) {
        metrics.notificationsReceived.increment()
        guard let topic = Topic(payload: payload) else { return }
        state.withLock { state in
            state.forget(topic)
            state.signal(topic)
        }
    }

    /// The listening connection came up or went down: every poll looks again, and nothing kept
    /// survives (a notification may have been missed in between).
    package func listening(_ isListening: Bool) {
        state.withLock { state in
            state.listening = isListening
            state.heads = [:]
            state.keys = [:]
            state.signalAll()
        }
        metrics.listenerUp.set(isListening ? 1 : 0)
    }

    /// The server is stopping: every poll answers now, and new ones answer at once.
    package func stop() {
        state.withLock { state in
            state.stopping = true
            state.signalAll()
        }
    }

    /// The head of `account`, if it is known without the database.
    package func knownHead(of account: AccountID) -> LogHead? {
        state.withLock { state in state.listening ? State.use(account, in: &state.heads) : nil }
    }

    /// Keeps the head `waiter`'s look at the database found, unless a change arrived since the
    /// waiter registered (then the head may be old already).
    package func remember(_ head: LogHead, of account: AccountID, lookedAfter waiter: Waiter) {
        state.withLock { state in
            let now = ContinuousClock.now
            state.sweep(now, after: Self.keptFor)
            guard state.listening, !state.isSignalled(waiter) else { return }
            state.heads[account] = Known(value: head, used: now)
        }
    }

    /// The keys of `device` on `account`, if they are known without the database.
    package func knownKeys(of device: DeviceID, on account: AccountID) -> DevicePublicKeys? {
        state.withLock { state in state.listening ? State.use(account, in: &state.keys)?[device] : nil }
    }

    /// Keeps the keys of `device` read from the database, unless a change of `account` arrived
    /// since `waiter` registered.
    package func remember(_ keys: DevicePublicKeys, of device: DeviceID, on account: AccountID, lookedAfter waiter: Waiter) {
        state.withLock { state in
            guard state.listening, !state.isSignalled(waiter) else { return }
            var known = state.keys[account] ?? Known(value: [:], used: .now)
            known.value[device] = keys
            known.used = .now
            state.keys[account] = known
        }
    }
}
