import Crypto
import KeychainModel

/// A random secret shown to people as base32 (recovery keys, pairing codes): made, read back
/// from its text, written as text; zeroed copies only.
struct Base32Secret: Sendable {
    let key: SymmetricKey

    init(byteCount: Int) { key = SymmetricKey(size: SymmetricKeySize(bitCount: byteCount * 8)) }

    init?(text: String, byteCount: Int) {
        guard var bytes = Base32.decode(text, count: byteCount) else { return nil }
        defer { zeroize(&bytes) }
        key = SymmetricKey(data: bytes)
    }

    var text: String {
        var bytes = key.withUnsafeBytes { Array($0) }
        defer { zeroize(&bytes) }
        return Base32.encode(bytes)
    }
}

/// RFC 4648 base32 (A-Z, 2-7), in groups of four joined by dashes: how recovery keys and pairing
/// codes are shown. Reading ignores dashes and spaces and takes either case.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var letters: [UInt8] = []
        var bits: UInt64 = 0, count = 0
        for byte in bytes {
            bits = bits << 8 | UInt64(byte)
            count += 8
            while count >= 5 {
                count -= 5
                letters.append(alphabet[Int((bits >> UInt64(count)) & 31)])
            }
        }
        if count > 0 { letters.append(alphabet[Int((bits << UInt64(5 - count)) & 31)]) }
        return stride(from: 0, to: letters.count, by: 4).map { String(decoding: letters[$0..<min($0 + 4, letters.count)], as: UTF8.self) }
            .joined(separator: "-")
    }

    /// Exactly `count` bytes, with the unused bits of the last letter zero; else nil.
    static func decode(_ text: String, count expected: Int) -> [UInt8]? {
        var bits: UInt64 = 0, count = 0
        var bytes: [UInt8] = []
        for character in text.uppercased().utf8 where character != UInt8(ascii: "-") && character != UInt8(ascii: " ") {
            guard let value = alphabet.firstIndex(of: character), bytes.count <= expected else { return nil }
            bits = (bits << 5 | UInt64(value)) & 0xFFFF
            count += 5
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(count)))
            }
        }
        guard bytes.count == expected, count < 5, bits & ((1 << UInt64(count)) - 1) == 0 else { return nil }
        return bytes
    }
}
