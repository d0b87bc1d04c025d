import Crypto
import FoundationEssentials
import KeychainModel

/// The accessibility classes that sync (SYNC.md): A for `WhenUnlocked`, C for `AfterFirstUnlock`
/// and the deprecated `Always`. ThisDeviceOnly items never sync.
package enum SyncClass: UInt8, Sendable, Hashable, CaseIterable {
    case a = 1
    case c = 2
}

/// The account's view key at one epoch: 256 random bits, reaching each device as a key share.
/// The class keys derive from it with HKDF-SHA-256 (salt: the account id; info: the class and
/// epoch), so a rotation renews them all at once.
package struct ViewKey: Sendable {
    package let epoch: UInt32
    let key: SymmetricKey

    /// A new random view key for `epoch`.
    package init(epoch: UInt32) {
        self.epoch = epoch
        key = SymmetricKey(size: .bits256)
    }

    package init(epoch: UInt32, bytes: [UInt8]) throws(SyncError) {
        guard bytes.count == 32 else { throw SyncError(.malformed, "a view key is 32 bytes") }
        self.epoch = epoch
        key = SymmetricKey(data: bytes)
    }

    /// The key of `syncClass` at this epoch, which wraps each record's own key.
    func classKey(_ syncClass: SyncClass, account: AccountID) -> SymmetricKey {
        derived("keyhaven sync class \(syncClass.rawValue) epoch \(epoch)", account: account)
    }

    /// The key that seals what the roster says of a device (its name) at this epoch.
    func rosterKey(account: AccountID) -> SymmetricKey {
        derived("keyhaven sync roster epoch \(epoch)", account: account)
    }

    private func derived(_ label: String, account: AccountID) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: account.bytes, info: Array(label.utf8), outputByteCount: 32)
    }

    /// The raw key, for a key share or the device's encrypted storage; the caller zeroes it.
    package func withBytes<R>(_ body: ([UInt8]) throws -> R) rethrows -> R {
        var bytes = key.withUnsafeBytes { Array($0) }
        defer { zeroize(&bytes) }
        return try body(bytes)
    }
}

/// A view key sealed to one device with HPKE (X25519, HKDF-SHA-256, ChaCha20-Poly1305), bound to
/// the account, the recipient and the epoch. It travels in a signed log entry, so who shared it is
/// the entry's signer.
package struct KeyShare: Hashable, Sendable, WireCodable {
    package let recipient: DeviceID
    package let epoch: UInt32
    let encapsulatedKey: [UInt8]
    let ciphertext: [UInt8]

    static let suite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly

    static func info(account: AccountID, recipient: DeviceID, epoch: UInt32) -> Data {
        var writer = ByteWriter()
        writer.raw("keyhaven sync key share v1".utf8)
        account.write(to: &writer)
        recipient.write(to: &writer)
        writer.u32(epoch)
        return Data(writer.bytes)
    }

    /// `viewKey` sealed to the device `recipient` whose keys are `keys`.
    package static func seal(_ viewKey: ViewKey, to recipient: DeviceID, keys: DevicePublicKeys, account: AccountID) -> KeyShare {
        let info = info(account: account, recipient: recipient, epoch: viewKey.epoch)
        // Sealing to a valid X25519 key does not fail.
        var sender = try! HPKE.Sender(recipientKey: keys.agreementKey, ciphersuite: suite, info: info)
        let sealed = viewKey.withBytes { try! sender.seal($0) }
        return KeyShare(recipient: recipient, epoch: viewKey.epoch, encapsulatedKey: Array(sender.encapsulatedKey), ciphertext: Array(sealed))
    }

    init(recipient: DeviceID, epoch: UInt32, encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        (self.recipient, self.epoch, self.encapsulatedKey, self.ciphertext) = (recipient, epoch, encapsulatedKey, ciphertext)
    }

    /// The view key, opened by the device it was sealed to.
    package func open(with identity: DeviceIdentity, account: AccountID) throws(SyncError) -> ViewKey {
        guard identity.id == recipient else { throw SyncError(.missingKeyShare, "the key share is for another device") }
        do {
            var recipientContext = try HPKE.Recipient(privateKey: identity.agreementKey, ciphersuite: Self.suite,
                                                      info: Self.info(account: account, recipient: recipient, epoch: epoch),
                                                      encapsulatedKey: Data(encapsulatedKey))
            var bytes = Array(try recipientContext.open(ciphertext))
            defer { zeroize(&bytes) }
            return try ViewKey(epoch: epoch, bytes: bytes)
        } catch {
            throw SyncError(.aeadFailure, "a key share does not open")
        }
    }

    package func write(to writer: inout ByteWriter) {
        recipient.write(to: &writer)
        writer.u32(epoch)
        Data(encapsulatedKey).write(to: &writer)
        Data(ciphertext).write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        recipient = try DeviceID(from: &reader)
        epoch = try reader.u32()
        encapsulatedKey = Array(try Data(from: &reader))
        ciphertext = Array(try Data(from: &reader))
        guard encapsulatedKey.count == 32, ciphertext.count == 48 else { throw CodecError(.malformed, "a key share of the wrong size") }
    }
}
