import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// The recovery key `sync create` shows once: 256 random bits, written as 52 base32 letters and
/// digits in groups of four. It derives (HKDF-SHA-256) a recovery pseudo-device that is on the
/// roster and receives key shares like any device, so a machine that lost everything can join
/// with it; the server never sees it.
package struct RecoveryKey: Sendable {
    private let secret: Base32Secret

    /// The recovery device's name on the roster: it starts with a NUL, which no device's name can
    /// hold (names come from command lines and are refused with one in pairing), so every device
    /// tells the recovery key from a device named so.
    static let rosterName = "\u{0}recovery key"

    package init() { secret = Base32Secret(byteCount: 32) }

    /// From its text: the groups with or without dashes or spaces, in any case.
    package init?(text: String) {
        guard let secret = Base32Secret(text: text, byteCount: 32) else { return nil }
        self.secret = secret
    }

    /// The key's text (52 letters and digits), shown once.
    package var text: String { secret.text }

    /// The recovery pseudo-device: its id and keys, the same every time for this key.
    package func identity() -> DeviceIdentity {
        func derive(_ label: String, _ count: Int) -> [UInt8] {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: secret.key, salt: Array("keyhaven sync recovery v1".utf8), info: Array(label.utf8),
                                   outputByteCount: count).withUnsafeBytes { Array($0) }
        }
        var signing = derive("signing key", 32), agreement = derive("agreement key", 32)
        defer {
            zeroize(&signing)
            zeroize(&agreement)
        }
        // 16 derived bytes are an id; 32 are valid Curve25519 private keys.
        return try! DeviceIdentity(id: DeviceID(bytes: derive("device id", 16))!, signingKey: signing, agreementKey: agreement)
    }
}
