import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

extension SyncEngine {
    /// `sync invite`, once the code is shown: waits (up to `timeout` seconds) for a device to ask
    /// with the code, adds it to the roster with a share of the view key, and answers it with the
    /// account and the head it was added at. The joiner's id and name.
    package func invite(code: PairingCode, timeout: Int) async throws(SyncEngineError) -> (device: DeviceID, name: String) {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync: nobody to invite to") }
        guard !state.isRemoved else { throw SyncEngineError(.removed, "this device was removed from its sync account") }
        let client = try Self.client(state.server, http: http)
        let deadline = ContinuousClock.now + .seconds(timeout)
        var request: (JoinRequest, [UInt8])?
        var seen = 0
        while request == nil {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw SyncEngineError(.pairing, "no device joined with the code within \(timeout) seconds") }
            let messages: [[UInt8]]
            do {
                messages = try await client.pairingMessages(slot: code.slot, side: 1, after: seen, wait: min(25, max(1, Int(left.components.seconds))))
            } catch {
                throw SyncEngineError(error)
            }
            seen += messages.count
            for message in messages {
                guard let body = code.open(message, label: "join"), let parsed = try? JoinRequest(wireBytes: body) else {
                    // A wrong code, or a message the relay changed (another key, another name):
                    // the pairing ends, nobody is added, and the joiner is told (it cannot open
                    // this answer either).
                    try? await client.postPairing(slot: code.slot, side: 0, message: code.seal(Array("refused".utf8), label: "refused", answering: message))
                    throw Self.pairingRefusal("a device asked to join with a message that does not authenticate with this code "
                                              + "(a mistyped code, or a message changed on the way): nobody was added")
                }
                request = (parsed, message)
                break
            }
        }
        guard let (joiner, asked) = request else { throw SyncEngineError(.pairing, "no device joined") }
        _ = try await syncNow()
        let head = try await appendRoster(joiner)
        do {
            try await client.postPairing(slot: code.slot, side: 0,
                                         message: code.seal(JoinAnswer(account: state.account, head: head).wireBytes, label: "answer", answering: asked))
        } catch {
            throw SyncEngineError(error)
        }
        return (joiner.device, joiner.name)
    }

    /// Adds `joiner` to the roster (retrying when another device pushes first); the head after it.
    private func appendRoster(_ joiner: JoinRequest) async throws(SyncEngineError) -> LogHead {
        try await appendEntries { context throws(SyncEngineError) in
            if context.log.roster[joiner.device] != nil { throw SyncEngineError(.pairing, "that device is on the account already") }
            guard let viewKey = context.state.viewKey(epoch: context.log.epoch) else {
                throw SyncEngineError.refusal(.missingKeyShare, "no view key for the account's epoch")
            }
            return [.addDevice(RosterAddition(device: joiner.device, keys: joiner.keys, name: joiner.name, viewKey: viewKey,
                                              account: context.state.account))]
        }
    }

    /// `sync join`: asks the inviting device (through the server's relay) to be added, with the
    /// code; on its answer, keeps the account, pins the head it names and syncs.
    package func join(server: String, code: PairingCode, name: String, timeout: Int = 600) async throws(SyncEngineError) -> SyncReport {
        guard try states.load() == nil else { throw SyncEngineError(.alreadyJoined, "this keychain home syncs already: `keyhaven sync leave` first") }
        let client = try Self.client(server, http: http)
        let identity = DeviceIdentity()
        let asked = code.seal(JoinRequest(device: identity.id, keys: identity.publicKeys, name: name).wireBytes, label: "join")
        do {
            try await client.postPairing(slot: code.slot, side: 1, message: asked)
        } catch {
            throw SyncEngineError(error)
        }
        let deadline = ContinuousClock.now + .seconds(timeout)
        var seen = 0
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw SyncEngineError(.pairing, "the inviting device did not answer within \(timeout) seconds") }
            let messages: [[UInt8]]
            do {
                messages = try await client.pairingMessages(slot: code.slot, side: 0, after: seen, wait: min(25, max(1, Int(left.components.seconds))))
            } catch {
                throw SyncEngineError(error)
            }
            seen += messages.count
            for message in messages {
                guard let body = code.open(message, label: "answer", answering: asked), let answer = try? JoinAnswer(wireBytes: body) else {
                    throw Self.pairingRefusal("the answer to this join does not authenticate with this code (a mistyped code, "
                                              + "or an answer changed on the way): not joined")
                }
                var state = DeviceState(server: client.server, account: answer.account, identity: identity, name: name, viewKey: nil)
                state.pinned = answer.head
                try states.save(state)
                do {
                    try markMember(answer.account)
                    return try await syncNow()
                } catch {
                    // Not joined after all (the log does not verify, or carries no key for us): forget it.
                    try? states.remove()
                    LogCache(home: home, account: answer.account).remove()
                    SyncMembership.leave(home)
                    throw error
                }
            }
        }
    }
}

extension SyncEngine {
    static func pairingRefusal(_ message: String) -> SyncEngineError {
        SyncEngineError(.pairing, "pairing authentication failure: " + message, refusal: .pairingAuthenticationFailure)
    }
}
