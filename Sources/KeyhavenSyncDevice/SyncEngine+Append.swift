import KeyhavenSyncCore

extension SyncEngine {
    /// Appends entries of this device's to the log in one push: pulls to the head, asks `bodies`
    /// for them (it may refuse, seeing the log), pushes them; again when another device pushed
    /// first (at most 20 times). The head after them.
    func appendEntries(_ bodies: (RoundContext) throws(SyncEngineError) -> [EntryBody]) async throws(SyncEngineError) -> LogHead {
        try await SyncLock(home: home).run { () throws(SyncEngineError) in try await lockedAppendEntries(bodies) }
    }

    private func lockedAppendEntries(_ bodies: (RoundContext) throws(SyncEngineError) -> [EntryBody]) async throws(SyncEngineError) -> LogHead {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        let identity = try state.identity()
        let client = try Self.client(state.server, http: http)
        let cache = LogCache(home: home, account: state.account)
        var context = try loadContext(state, identity: identity, cache: cache)
        for attempt in 0..<20 {
            if attempt > 0 { await Self.backOff(attempt) }
            _ = try await pull(&context, client: client, cache: cache)
            try Self.requireRotated(context.log)
            if try await pushVerified(Self.chained(try bodies(context), in: context), context: &context, client: client, cache: cache) {
                try states.save(context.state)
                return context.log.head
            }
        }
        throw SyncEngineError(.server, "the log kept moving during 20 rounds: try again")
    }
}

extension SyncEngine {
    /// `bodies` as this device's next entries after the verified head: each signed, with the next
    /// counter of this device's and the previous entry's hash, under the current epoch.
    static func chained(_ bodies: [EntryBody], in context: RoundContext) -> [LogEntry] {
        var counter = max(context.state.counter, context.log.roster[context.state.device]?.lastCounter ?? 0)
        var head = context.log.head
        return bodies.map { body in
            counter += 1
            let entry = LogEntry(body, account: context.state.account, after: head, counter: counter, epoch: context.log.epoch,
                                 signedBy: context.identity)
            head = entry.head
            return entry
        }
    }

    /// Refuses to write while the log's last entry removed a device and the rotation that must
    /// come with it has not arrived (the server withholds it): nothing is written under the keys
    /// the removed device knows.
    static func requireRotated(_ log: LogState) throws(SyncEngineError) {
        guard let removed = log.pendingRotation else { return }
        throw SyncEngineError.refusal(.missingKeyShare, "device \(removed) was removed, and the rotation of the keys that comes with its removal has not "
                              + "reached this device: nothing is written until it does")
    }

    /// The entry that rotates the view key to a new epoch shared with the active devices but
    /// `leaving`, and with `joining` (devices added in the same push), after the current one.
    static func rotation(_ context: RoundContext, leaving: DeviceID, joining: [(DeviceID, DevicePublicKeys)] = []) throws(SyncEngineError) -> EntryBody {
        guard let current = context.state.viewKey(epoch: context.log.epoch) else {
            throw SyncEngineError.refusal(.missingKeyShare, "no view key for the account's epoch \(context.log.epoch)")
        }
        let staying = context.log.activeDevices.filter { $0 != leaving }.compactMap { id in context.log.roster[id].map { (id, $0.keys) } }
        return .rotateKeys(KeyRotation(from: current, to: ViewKey(epoch: context.log.epoch + 1), recipients: staying + joining,
                                       account: context.state.account))
    }
}
