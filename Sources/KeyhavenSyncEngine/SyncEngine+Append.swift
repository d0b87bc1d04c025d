import KeyhavenSyncProtocol

extension SyncEngine {
    /// Appends one entry of this device's to the log: pulls to the head, asks `body` for the entry
    /// (it may refuse, seeing the log), pushes it; again when another device pushed first (at most
    /// 20 times). The head after it.
    func appendEntry(_ body: (RoundContext) throws(SyncEngineError) -> EntryBody) async throws(SyncEngineError) -> LogHead {
        try await SyncLock(home: home).run { () throws(SyncEngineError) in try await lockedAppendEntry(body) }
    }

    private func lockedAppendEntry(_ body: (RoundContext) throws(SyncEngineError) -> EntryBody) async throws(SyncEngineError) -> LogHead {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        let identity = try state.identity()
        let client = try Self.client(state.server, http: http)
        let cache = LogCache(home: home, account: state.account)
        var context = try loadContext(state, identity: identity, cache: cache)
        for attempt in 0..<20 {
            if attempt > 0 { await Self.backOff(attempt) }
            _ = try await pull(&context, client: client, cache: cache)
            let counter = max(context.state.counter, context.log.roster[context.state.device]?.lastCounter ?? 0) + 1
            let entry = LogEntry(try body(context), account: context.state.account, after: context.log.head, counter: counter,
                                 epoch: context.log.epoch, signedBy: identity)
            if try await pushVerified([entry], context: &context, client: client, cache: cache) {
                try states.save(context.state)
                return context.log.head
            }
        }
        throw SyncEngineError(.server, "the log kept moving during 20 rounds: try again")
    }
}
