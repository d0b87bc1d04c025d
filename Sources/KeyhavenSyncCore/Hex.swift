/// Lowercase hexadecimal, as ids, hashes and signatures appear in URLs, headers and JSON. Decoding
/// is strict: digits only (either case), an even count; no sign, space or prefix.
package enum Hex {
    package static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        String(decoding: bytes.flatMap { [digit($0 >> 4), digit($0 & 0xF)] }, as: UTF8.self)
    }

    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func digit(_ n: UInt8) -> UInt8 { n < 10 ? UInt8(ascii: "0") + n : UInt8(ascii: "a") + n - 10 }
}
