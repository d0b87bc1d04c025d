import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// The one-time code `sync invite` prints and `sync join` takes: 160 random bits (32 base32
/// letters and digits in groups of four). Its first 32 bits name the relay slot under which the
/// server relays the two devices' messages; all 160 key the HMAC both messages carry, so the
/// server, which never sees the other 128, can neither put its own device in the joiner's place
/// nor hand the joiner a forged account. A code mistyped after its first seven letters reaches
/// the inviting device, which names the failure (pairing authentication failure) instead of
/// waiting. It is never a short code stretched into a key (the server could try them all).
package struct PairingCode: Sendable {
    private let secret: Base32Secret
    static let byteCount = 20

    package init() { secret = Base32Secret(byteCount: Self.byteCount) }

    package init?(text: String) {
        guard let secret = Base32Secret(text: text, byteCount: Self.byteCount) else { return nil }
        self.secret = secret
    }

    package var text: String { secret.text }

    /// The relay slot: 32 bytes the server sees, derived from the code's first 4 bytes only.
    package var slot: [UInt8] {
        var prefix = secret.key.withUnsafeBytes { Array($0.prefix(4)) }
        defer { zeroize(&prefix) }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: prefix), salt: Array("keyhaven sync pairing v2".utf8),
                                      info: Array("slot".utf8), outputByteCount: 32).withUnsafeBytes { Array($0) }
    }

    private var macKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: secret.key, salt: Array("keyhaven sync pairing v2".utf8), info: Array("mac".utf8), outputByteCount: 32)
    }

    /// `body` with its MAC (domain `label`, and what it answers, if anything) after it.
    package func seal(_ body: [UInt8], label: String, answering: [UInt8] = []) -> [UInt8] {
        body + Array(HMAC<SHA256>.authenticationCode(for: Self.macInput(body, label: label, answering: answering), using: macKey))
    }

    /// The body of a message whose MAC verifies; nil for anything else.
    package func open(_ message: [UInt8], label: String, answering: [UInt8] = []) -> [UInt8]? {
        guard message.count > 32 else { return nil }
        let body = Array(message.dropLast(32)), mac = Array(message.suffix(32))
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.macInput(body, label: label, answering: answering),
                                                     using: macKey) else { return nil }
        return body
    }

    private static func macInput(_ body: [UInt8], label: String, answering: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        Data(label.utf8).write(to: &writer)
        Data(SHA256.hash(data: answering)).write(to: &writer)
        Data(body).write(to: &writer)
        return writer.bytes
    }
}

/// The joining device's request: its id, public keys and name.
struct JoinRequest: WireCodable {
    let device: DeviceID
    let keys: DevicePublicKeys
    let name: String

    init(device: DeviceID, keys: DevicePublicKeys, name: String) {
        (self.device, self.keys, self.name) = (device, keys, name)
    }

    func write(to writer: inout ByteWriter) {
        device.write(to: &writer)
        keys.write(to: &writer)
        name.write(to: &writer)
    }

    init(from reader: inout ByteReader) throws(CodecError) {
        device = try DeviceID(from: &reader)
        keys = try DevicePublicKeys(from: &reader)
        name = try String(from: &reader)
        guard name.utf8.count <= 256, !name.contains("\u{0}") else { throw CodecError(.malformed, "a device name over 256 bytes, or with a NUL") }
    }
}

/// The inviting device's answer: the account and the head at which it added the joiner.
struct JoinAnswer: WireCodable {
    let account: AccountID
    let head: LogHead

    init(account: AccountID, head: LogHead) { (self.account, self.head) = (account, head) }

    func write(to writer: inout ByteWriter) {
        account.write(to: &writer)
        head.write(to: &writer)
    }

    init(from reader: inout ByteReader) throws(CodecError) {
        account = try AccountID(from: &reader)
        head = try LogHead(from: &reader)
    }
}
