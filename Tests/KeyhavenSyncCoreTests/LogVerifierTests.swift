import Foundation
import KeychainModel
import KeyhavenSyncCore
import Testing

/// The device-side verification of a pulled log: an honest log verifies; every move a hostile
/// server can make on entries it relays is refused with its named error, and nothing is applied.
struct LogVerifierTests {
    func refusal(_ body: () throws -> Void) -> SyncError.Code? {
        do {
            try body()
            return nil
        } catch let error as SyncError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("An honest log verifies: roster, counters, epochs and the head")
    func honestLog() throws {
        var log = TestLog()
        let second = DeviceIdentity()
        log.add(second, name: "laptop", by: log.creator)
        log.record("one", by: second)
        log.record("two", by: log.creator)
        log.rotate(by: log.creator, sharingWith: [log.creator, second])
        log.record("three", by: second)
        let state = try log.verified()
        #expect(state.head == log.head && state.head.sequence == 6)
        #expect(state.activeDevices == [log.creator.id, second.id].sorted())
        #expect(state.epoch == 2)
        #expect(state.roster[second.id]?.addedBy == log.creator.id && state.roster[second.id]?.lastCounter == 2)
        // In parts, from a pinned head, as a device pulls.
        let first = try LogState(account: log.account).verifying(Array(log.entries.prefix(3)), serverHead: log.entries[2].head)
        #expect(try first.verifying(Array(log.entries.dropFirst(3)), serverHead: log.head) == state)
    }

    @Test("A replayed entry, a rollback, a reorder, a dropped or modified entry and a fork are refused by name")
    func serverMoves() throws {
        var log = TestLog()
        let second = DeviceIdentity()
        log.add(second, name: "laptop", by: log.creator)
        for index in 0..<4 { log.record("item \(index)", by: index % 2 == 0 ? second : log.creator) }
        let pinned = try LogState(account: log.account).verifying(Array(log.entries.prefix(4)), serverHead: log.entries[3].head)
        let rest = Array(log.entries.dropFirst(4))
        // Rollback: the server shows a head behind the pinned one.
        #expect(refusal { _ = try pinned.verifying([], serverHead: log.entries[1].head) } == .headRegression)
        // Reordered, dropped: the chain breaks.
        #expect(refusal { _ = try pinned.verifying(rest.reversed(), serverHead: log.head) } == .brokenChain)
        #expect(refusal { _ = try pinned.verifying(Array(rest.dropFirst()), serverHead: log.head) } == .brokenChain)
        // An old entry offered again at its place: already verified.
        #expect(refusal { _ = try pinned.verifying([log.entries[2]] + rest, serverHead: log.head) } == .replayedEntry)
        // Modified: a byte of the sealed record (just before the signature) changed; it still decodes.
        var bytes = rest[0].wireBytes
        bytes[bytes.count - 65] ^= 0x01
        let modified = try LogEntry.decode(bytes)
        #expect(refusal { _ = try pinned.verifying([modified] + rest.dropFirst(), serverHead: log.head) } == .badSignature)
        // A fork: another entry at the next position, on the same pinned head. Each branch verifies
        // alone; a device on one branch that is shown the other's head names the fork.
        var forked = log
        forked.entries = Array(log.entries.prefix(4))
        forked.counters[second.id] = 10
        let branch = forked.record("another history", by: second)
        #expect(refusal { _ = try pinned.verifying([branch], serverHead: branch.head) } == nil)
        let onOtherBranch = try pinned.verifying([branch], serverHead: branch.head)
        #expect(refusal { _ = try onOtherBranch.verifying([], serverHead: LogHead(sequence: branch.sequence, hash: rest[0].hash)) }
                == .forkDetected)
    }

    @Test("Replay of an entry at a new position: the device's counter has been used")
    func replayAtNewSequence() throws {
        var log = TestLog()
        let entry = log.record("once", by: log.creator)
        // The server cannot re-sign; it can only resend the signed entry, whose sequence is fixed.
        let state = try log.verified()
        #expect(refusal { _ = try state.verifying([entry], serverHead: entry.head) } == .replayedEntry)
        // A device that re-signs an entry with an old counter (a bug or a stolen key) is refused too.
        var replay = log
        replay.counters[log.creator.id] = 1
        let again = replay.record("again", by: log.creator)
        #expect(refusal { _ = try state.verifying([again], serverHead: again.head) } == .replayedEntry)
    }

    @Test("Entries of unknown, removed or server-made devices and of other accounts are refused")
    func devicesAndAccounts() throws {
        var log = TestLog()
        let second = DeviceIdentity(), intruder = DeviceIdentity()
        log.add(second, name: "laptop", by: log.creator)
        let state = try log.verified()
        // The server makes a device and has it add itself.
        var forged = log
        forged.add(intruder, name: "server's", by: intruder)
        #expect(refusal { _ = try state.verifying(Array(forged.entries.suffix(1)), serverHead: forged.head) } == .unknownDevice)
        // A removed device's entries after its removal.
        var removal = log
        removal.append(.removeDevice(second.id), by: log.creator)
        removal.rotate(by: log.creator, sharingWith: [log.creator])
        removal.record("after removal", by: second)
        #expect(refusal { _ = try state.verifying(Array(removal.entries.suffix(3)), serverHead: removal.head) } == .unknownDevice)
        // Another account's log.
        let otherAccount = TestLog()
        #expect(refusal { _ = try LogState(account: log.account).verifying(otherAccount.entries, serverHead: otherAccount.head) }
                == .wrongAccount)
    }

    @Test("Epochs: an item under a rotated-away epoch, and a rotation that leaves a device out, are refused")
    func epochs() throws {
        var log = TestLog()
        let second = DeviceIdentity()
        log.add(second, name: "laptop", by: log.creator)
        let state = try log.verified()
        var rotated = log
        rotated.rotate(by: log.creator, sharingWith: [log.creator, second])
        let old = ViewKey(epoch: 1)
        let stale = SealedRecord.seal(Array("late".utf8), record: RecordID(), syncClass: .c, version: 1, isDeleted: false, viewKey: old,
                                      account: log.account)
        rotated.append(.record(stale), by: second, epoch: 1)
        #expect(refusal { _ = try state.verifying(Array(rotated.entries.suffix(2)), serverHead: rotated.head) } == .staleEpoch)
        var partial = log
        partial.rotate(by: log.creator, sharingWith: [log.creator])
        #expect(refusal { _ = try state.verifying(Array(partial.entries.suffix(1)), serverHead: partial.head) } == .missingKeyShare)
    }

    @Test("Every single-byte change of an entry is refused: it does not decode, or does not verify")
    func everyByteFlip() throws {
        var log = TestLog()
        log.record("flip me", by: log.creator)
        let state = try LogState(account: log.account).verifying(Array(log.entries.prefix(1)), serverHead: log.entries[0].head)
        let bytes = log.entries[1].wireBytes
        var accepted = 0
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x20
            guard let entry = try? LogEntry.decode(changed) else { continue }
            if (try? state.verifying([entry], serverHead: entry.head)) != nil { accepted += 1 }
        }
        #expect(accepted == 0)
    }

    @Test("The first entry must add its own signer at epoch 1")
    func genesis() throws {
        let account = AccountID()
        let device = DeviceIdentity(), other = DeviceIdentity()
        let viewKey = ViewKey(epoch: 1)
        let addsOther = LogEntry(.addDevice(RosterAddition(device: other.id, keys: other.publicKeys, name: "x", viewKey: viewKey, account: account)),
                                 account: account, after: .empty, counter: 1, epoch: 1, signedBy: device)
        #expect(refusal { _ = try LogState(account: account).verifying([addsOther], serverHead: addsOther.head) } == .malformed)
        let record = LogEntry(.heartbeat(1), account: account, after: .empty, counter: 1, epoch: 1, signedBy: device)
        #expect(refusal { _ = try LogState(account: account).verifying([record], serverHead: record.head) } == .malformed)
    }
}
