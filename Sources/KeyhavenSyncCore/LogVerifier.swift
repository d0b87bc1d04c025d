import FoundationEssentials

/// A device on the roster, as the verified log says.
package struct RosterMember: Hashable, Sendable {
    package let keys: DevicePublicKeys
    package let addedBy: DeviceID
    package let addedAt: UInt64
    package internal(set) var isActive = true
    /// The highest counter of the device's entries so far.
    package internal(set) var lastCounter: UInt64 = 0
    /// Where it was removed, if it was.
    package internal(set) var removedAt: UInt64?
    /// The device that signed its removal.
    package internal(set) var removedBy: DeviceID?
    /// The time its last heartbeat carries (milliseconds since 1970, its clock), if it sent one.
    package internal(set) var lastHeartbeat: UInt64?
}

/// What a device knows for certain of its account's log: the head it verified (pinned), the roster
/// and the key epoch at that head. A device only moves it forward, by verifying what it pulls.
package struct LogState: Hashable, Sendable {
    package let account: AccountID
    package internal(set) var head = LogHead.empty
    package internal(set) var roster: [DeviceID: RosterMember] = [:]
    package internal(set) var epoch: UInt32 = 0
    package internal(set) var format: UInt8 = 0
    /// The device removed by the last entry, until the rotation that must follow it at once: while
    /// set, no device may write under the epoch the removed device knows.
    package internal(set) var pendingRotation: DeviceID?

    /// The state of an account before its first entry.
    package init(account: AccountID) { self.account = account }

    /// The devices on the roster now.
    package var activeDevices: [DeviceID] { roster.filter(\.value.isActive).keys.sorted() }

    /// The state after `entries`, which must continue this state's head one by one and end at
    /// `serverHead`, the head the server says it has. All or nothing: on any refusal this state
    /// is unchanged (it is a value) and the error names the refusal.
    package func verifying(_ entries: [LogEntry], serverHead: LogHead) throws(SyncError) -> LogState {
        if serverHead.sequence < head.sequence {
            throw SyncError(.headRegression, "the server's head (\(serverHead.sequence)) is behind the verified one (\(head.sequence))")
        }
        if serverHead.sequence == head.sequence, serverHead.hash != head.hash {
            throw SyncError(.forkDetected, "the server has another entry at position \(head.sequence)")
        }
        var next = self
        for entry in entries { try next.apply(entry) }
        guard next.head == serverHead else {
            throw SyncError(.brokenChain, "the entries end at \(next.head.sequence), the server's head is at \(serverHead.sequence)")
        }
        return next
    }

    /// Verifies one entry against this state and applies it.
    mutating func apply(_ entry: LogEntry) throws(SyncError) {
        guard entry.format <= LogEntry.currentFormat else { throw SyncError(.malformed, "an entry of a newer format (\(entry.format))") }
        guard entry.format >= format else { throw SyncError(.formatDowngrade, "an entry of format \(entry.format) after format \(format)") }
        guard entry.account == account else { throw SyncError(.wrongAccount, "an entry of account \(entry.account)") }
        guard entry.sequence > head.sequence else { throw SyncError(.replayedEntry, "an entry at position \(entry.sequence), already verified") }
        guard entry.sequence == head.sequence + 1 else {
            throw SyncError(.brokenChain, "entry \(entry.sequence) where \(head.sequence + 1) was due")
        }
        guard entry.previousHash == head.hash else {
            throw SyncError(entry.sequence == 1 ? .brokenChain : .forkDetected,
                            "entry \(entry.sequence) follows another history than the verified one")
        }
        // A counter its device used before is a replay, whatever position it was moved to (checked
        // first, so a replay is named as one even when its moved position breaks the signature).
        if let member = roster[entry.device], entry.deviceCounter <= member.lastCounter {
            throw SyncError(.replayedEntry, "device \(entry.device) used counter \(entry.deviceCounter) before")
        }
        let signer = try signerKeys(of: entry)
        guard entry.isSigned(by: signer) else { throw SyncError(.badSignature, "entry \(entry.sequence)'s signature does not verify") }
        try applyBody(of: entry)
        roster[entry.device]?.lastCounter = entry.deviceCounter
        format = entry.format
        head = entry.head
    }

    /// The keys the entry's signature must verify with: its device's, from the roster (the first
    /// entry adds its own signer).
    private func signerKeys(of entry: LogEntry) throws(SyncError) -> DevicePublicKeys {
        if entry.sequence == 1 {
            guard case .addDevice(let addition) = entry.body, addition.device == entry.device, entry.keyEpoch == 1,
                  addition.share.epoch == 1, addition.share.recipient == entry.device else {
                throw SyncError(.malformed, "the first entry must add the device that signs it, at epoch 1")
            }
            return addition.keys
        }
        guard let member = roster[entry.device] else { throw SyncError(.unknownDevice, "device \(entry.device) is not on the roster") }
        guard member.isActive else { throw SyncError(.unknownDevice, "device \(entry.device) was removed at \(member.removedAt ?? 0)") }
        return member.keys
    }

    private mutating func applyBody(of entry: LogEntry) throws(SyncError) {
        if let removed = pendingRotation {
            // A removal and its rotation are one push: nothing may come between them.
            guard case .rotateKeys = entry.body, entry.device == roster[removed]?.removedBy else {
                throw SyncError(.missingKeyShare, "entry \(entry.sequence) comes after device \(removed)'s removal without the rotation of the keys")
            }
        }
        switch entry.body {
        case .record, .heartbeat:
            guard entry.keyEpoch == epoch else { throw SyncError(.staleEpoch, "entry \(entry.sequence) is under epoch \(entry.keyEpoch), not \(epoch)") }
            if case .heartbeat(let time) = entry.body {
                let last = roster[entry.device]?.lastHeartbeat ?? 0
                roster[entry.device]?.lastHeartbeat = max(last, time)
            }
        case .addDevice(let addition):
            if entry.sequence == 1 { epoch = 1 }
            guard entry.keyEpoch == epoch, addition.share.epoch == epoch, addition.share.recipient == addition.device else {
                throw SyncError(.missingKeyShare, "device \(addition.device) is added without a share of epoch \(epoch)")
            }
            guard roster[addition.device] == nil else { throw SyncError(.malformed, "device \(addition.device) is on the roster already") }
            roster[addition.device] = RosterMember(keys: addition.keys, addedBy: entry.device, addedAt: entry.sequence)
        case .removeDevice(let device):
            guard entry.keyEpoch == epoch, roster[device]?.isActive == true else {
                throw SyncError(.unknownDevice, "device \(device) is not on the roster to be removed")
            }
            roster[device]?.isActive = false
            roster[device]?.removedAt = entry.sequence
            roster[device]?.removedBy = entry.device
            pendingRotation = device
        case .rotateKeys(let rotation):
            guard entry.keyEpoch == epoch, rotation.newEpoch == epoch + 1 else {
                throw SyncError(.staleEpoch, "a rotation to epoch \(rotation.newEpoch) from epoch \(epoch)")
            }
            let recipients = Set(rotation.shares.map(\.recipient))
            guard rotation.shares.allSatisfy({ $0.epoch == rotation.newEpoch }), recipients == Set(activeDevices),
                  recipients.count == rotation.shares.count else {
                throw SyncError(.missingKeyShare, "a rotation that does not share epoch \(rotation.newEpoch) with exactly the roster")
            }
            epoch = rotation.newEpoch
            pendingRotation = nil
        }
    }
}
