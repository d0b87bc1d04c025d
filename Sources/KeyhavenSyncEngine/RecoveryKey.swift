import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenSyncProtocol

/// The recovery key `sync create` shows once: 256 random bits, written as 52 base32 letters and
/// digits in groups of four. It derives (HKDF-SHA-256) a recovery pseudo-device that is on the
/// roster and receives key shares like any device, so a machine that lost everything can join
/// with it; the server never sees it.
package struct RecoveryKey: Sendable {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private let secret: SymmetricKey

    package init() { secret = SymmetricKey(size: .bits256) }

    /// From its text: the groups with or without dashes or spaces, in any case.
    package init?(text: String) {
        var bits: UInt64 = 0, count = 0
        var bytes: [UInt8] = []
        for character in text.uppercased().utf8 where character != UInt8(ascii: "-") && character != UInt8(ascii: " ") {
            guard let value = Self.alphabet.firstIndex(of: character) else { return nil }
            bits = bits << 5 | UInt64(value)
            count += 5
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(count)))
            }
        }
        // 52 letters carry 260 bits: 32 bytes and 4 zero bits.
        guard bytes.count == 32, bits & ((1 << UInt64(count)) - 1) == 0 else { return nil }
        secret = SymmetricKey(data: bytes)
    }

    /// The key's text, shown once.
    package var text: String {
        var letters: [UInt8] = []
        var bits: UInt64 = 0, count = 0
        secret.withUnsafeBytes { raw in
            for byte in raw {
                bits = bits << 8 | UInt64(byte)
                count += 8
                while count >= 5 {
                    count -= 5
                    letters.append(Self.alphabet[Int((bits >> UInt64(count)) & 31)])
                }
            }
        }
        if count > 0 { letters.append(Self.alphabet[Int((bits << UInt64(5 - count)) & 31)]) }
        return stride(from: 0, to: letters.count, by: 4).map { String(decoding: letters[$0..<min($0 + 4, letters.count)], as: UTF8.self) }
            .joined(separator: "-")
    }

    /// The recovery pseudo-device: its id and keys, the same every time for this key.
    package func identity() -> DeviceIdentity {
        func derive(_ label: String, _ count: Int) -> [UInt8] {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, salt: Array("keyhaven sync recovery v1".utf8), info: Array(label.utf8),
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
