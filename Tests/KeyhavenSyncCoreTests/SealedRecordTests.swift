import Foundation
import KeychainModel
import KeyhavenSyncCore
import Testing

/// Sealed records and key shares: they open only where they were sealed for, and show the server
/// nothing of their contents but a padded size.
struct SealedRecordTests {
    let account = AccountID()
    let viewKey = ViewKey(epoch: 3)

    func seal(_ payload: String, record: RecordID = RecordID(), deleted: Bool = false) -> SealedRecord {
        SealedRecord.seal(Array(payload.utf8), record: record, syncClass: .c, version: 42, isDeleted: deleted, viewKey: viewKey, account: account)
    }

    func code(_ body: () throws -> Void) -> SyncError.Code? {
        do { try body(); return nil } catch let error as SyncError { return error.code } catch { return nil }
    }

    @Test("A record opens with its view key, and its size is a 64-byte bucket (at least 128)")
    func roundTrip() throws {
        for length in [0, 1, 63, 64, 127, 128, 1_000] {
            let payload = String(repeating: "x", count: length)
            let sealed = seal(payload)
            #expect(try sealed.open(viewKey: viewKey, account: account) == Array(payload.utf8))
            let decoded = try SealedRecord(wireBytes: sealed.wireBytes)
            #expect(decoded == sealed)
            let bodySize = sealed.wireBytes.count
            #expect(bodySize == seal(String(repeating: "y", count: length)).wireBytes.count)
        }
        #expect(seal("").wireBytes.count == seal(String(repeating: "z", count: 126)).wireBytes.count)
    }

    @Test("The ciphertext holds no trace of the payload: a canary is found raw, in hex or in base64 nowhere")
    func noPlaintext() throws {
        let canary = "canary-\(UUID().uuidString)"
        let bytes = seal(canary).wireBytes
        for form in [Array(canary.utf8), Array(Data(canary.utf8).base64EncodedString().utf8),
                     Array(Data(canary.utf8).map { String(format: "%02x", $0) }.joined().utf8)] {
            #expect(!Data(bytes).contains(Data(form.prefix(12))))
        }
    }

    @Test("Moved to another record, account, epoch or version, or a tombstone flag flipped: it does not open")
    func bindings() throws {
        let first = seal("first"), second = seal("second")
        // The second record's sealed parts under the first record's id.
        var swapped = second.wireBytes
        swapped.replaceSubrange(0..<16, with: first.record.bytes)
        #expect(code { _ = try SealedRecord(wireBytes: swapped).open(viewKey: viewKey, account: account) } == .aeadFailure)
        #expect(code { _ = try first.open(viewKey: viewKey, account: AccountID()) } == .aeadFailure)
        #expect(code { _ = try first.open(viewKey: ViewKey(epoch: 3), account: account) } == .aeadFailure)
        var version = first.wireBytes
        version[17] ^= 0x01                              // the version's low byte
        #expect(code { _ = try SealedRecord(wireBytes: version).open(viewKey: viewKey, account: account) } == .aeadFailure)
        var tombstone = first.wireBytes
        tombstone[25] = 1                                // the delete flag
        #expect(code { _ = try SealedRecord(wireBytes: tombstone).open(viewKey: viewKey, account: account) } == .aeadFailure)
    }

    @Test("A key share opens only for its device, account and epoch; a rotation carries the previous key")
    func keyShares() throws {
        let device = DeviceIdentity(), other = DeviceIdentity()
        let share = KeyShare.seal(viewKey, to: device.id, keys: device.publicKeys, account: account)
        let opened = try share.open(with: device, account: account)
        #expect(opened.epoch == 3)
        let record = seal("shared")
        #expect(try record.open(viewKey: opened, account: account) == Array("shared".utf8))
        #expect(code { _ = try share.open(with: other, account: account) } == .missingKeyShare)
        #expect(code { _ = try share.open(with: device, account: AccountID()) } == .aeadFailure)
        // A share re-addressed to another device by the server does not open there either.
        var readdressed = share.wireBytes
        readdressed.replaceSubrange(0..<16, with: other.id.bytes)
        #expect(code { _ = try KeyShare(wireBytes: readdressed).open(with: other, account: account) } == .aeadFailure)

        let next = ViewKey(epoch: 4)
        let rotation = KeyRotation(from: viewKey, to: next, recipients: [(device.id, device.publicKeys)], account: account)
        let nextOpened = try #require(rotation.shares.first).open(with: device, account: account)
        let previous = try rotation.previousKey(under: nextOpened)
        #expect(try record.open(viewKey: previous, account: account) == Array("shared".utf8))
        #expect(code { _ = try rotation.previousKey(under: ViewKey(epoch: 4)) } == .aeadFailure)
    }

    @Test("Device names are sealed in the roster: readable with the view key, absent from the entry's bytes")
    func names() throws {
        let device = DeviceIdentity()
        let addition = RosterAddition(device: device.id, keys: device.publicKeys, name: "alice's laptop", viewKey: viewKey, account: account)
        #expect(try addition.name(viewKey: viewKey, account: account) == "alice's laptop")
        #expect(!Data(addition.wireBytes).contains(Data("alice".utf8)))
        #expect(code { _ = try addition.name(viewKey: ViewKey(epoch: 3), account: account) } == .aeadFailure)
    }

    @Test("Identifiers: hex round trip, and malformed hex refused")
    func identifiers() {
        let id = RecordID()
        #expect(RecordID(hex: id.hex) == id && RecordID(hex: id.hex.uppercased()) == id)
        #expect(RecordID(hex: "xyz") == nil && RecordID(hex: String(repeating: "g", count: 32)) == nil)
        #expect(LogHead.empty.fingerprint.hasPrefix("0-0000-"))
    }
}
