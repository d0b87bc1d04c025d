/// Length hiding for encrypted blobs: `u32 length || content || zeros` up to a multiple of
/// `block` bytes, so a ciphertext's size tells only roughly how long a secret is.
package enum Padding {
    package static func pad(_ content: [UInt8], block: Int) -> [UInt8] {
        // One allocation of the final size, so no partial copy of the content is left behind
        // in a buffer that grew.
        let total = (4 + content.count + block - 1) / block * block
        var writer = ByteWriter(capacity: total)
        writer.u32(UInt32(content.count))
        writer.raw(content)
        writer.zeros(total - writer.bytes.count)
        return writer.bytes
    }

    package static func unpad(_ padded: [UInt8]) throws(CodecError) -> [UInt8] {
        var reader = ByteReader(padded)
        let length = Int(try reader.u32())
        let content = try reader.take(length)
        guard try reader.take(reader.remaining).allSatisfy({ $0 == 0 }) else {
            throw CodecError(.malformed, "padding is not zero")
        }
        return Array(content)
    }
}
