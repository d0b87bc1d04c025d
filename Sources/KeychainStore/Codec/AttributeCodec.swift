import FoundationEssentials

/// The byte format of a set of attributes inside an encrypted blob.
///
/// `u16 count`, then per attribute: `u8 nameLength, name (UTF-8), u8 type, u32 length, payload`.
/// Types: `s` UTF-8 string, `d` data, `n` Int64 (8 bytes LE), `t` date (Float64 bits, 8 bytes LE,
/// seconds since 2001-01-01). Names are written in sorted order, so equal sets encode equally.
enum AttributeCodec {
    static func encode(_ attributes: [String: AttributeValue], into writer: inout ByteWriter) {
        writer.u16(UInt16(attributes.count))
        for name in attributes.keys.sorted() {
            writer.u8(UInt8(name.utf8.count))
            writer.raw(name.utf8)
            switch attributes[name]! {
            case .string(let s):
                writer.u8(0x73); writer.u32(UInt32(s.utf8.count)); writer.raw(s.utf8)
            case .data(let d):
                writer.u8(0x64); writer.u32(UInt32(d.count)); writer.raw(d)
            case .number(let n):
                writer.u8(0x6E); writer.u32(8); writer.u64(UInt64(bitPattern: n))
            case .date(let date):
                writer.u8(0x74); writer.u32(8); writer.u64(date.timeIntervalSinceReferenceDate.bitPattern)
            }
        }
    }

    static func decode(from reader: inout ByteReader) throws(CodecError) -> [String: AttributeValue] {
        let count = Int(try reader.u16())
        var result: [String: AttributeValue] = [:]
        result.reserveCapacity(count)
        for _ in 0..<count {
            let nameLength = Int(try reader.u8())
            guard let name = String(exactUTF8: try reader.take(nameLength)), !name.isEmpty else {
                throw CodecError(.malformed, "stored attribute name is not valid")
            }
            let type = try reader.u8()
            let length = Int(try reader.u32())
            let payload = try reader.take(length)
            let value: AttributeValue
            switch type {
            case 0x73:
                guard let s = String(exactUTF8: payload) else {
                    throw CodecError(.malformed, "stored string is not UTF-8")
                }
                value = .string(s)
            case 0x64: value = .data(Data(payload))
            case 0x6E, 0x74:
                guard length == 8 else { throw CodecError(.malformed, "stored number has the wrong size") }
                var bits: UInt64 = 0
                for (index, byte) in payload.enumerated() { bits |= UInt64(byte) << (8 * index) }
                value = type == 0x6E ? .number(Int64(bitPattern: bits))
                    : .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
            default:
                throw CodecError(.malformed, "stored attribute has an unknown type")
            }
            guard result.updateValue(value, forKey: name) == nil else {
                throw CodecError(.malformed, "stored attribute appears twice")
            }
        }
        return result
    }
}
