import KeychainModel

/// The messages of one side of a pairing, as the server relays them: opaque to it (sealed under a
/// key from the pairing code, which the server never sees). Each is length-prefixed and at most
/// ``maximumSize`` bytes; a pairing has at most ``maximumCount`` per side.
package struct RelayMessages: Hashable, Sendable, WireCodable {
    package static let maximumSize = 64 << 10
    package static let maximumCount = 8

    package let messages: [[UInt8]]

    package init(_ messages: [[UInt8]]) { self.messages = messages }

    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(messages.count))
        for message in messages {
            writer.u32(UInt32(message.count))
            writer.raw(message)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        let count = Int(try reader.u32())
        guard count <= Self.maximumCount else { throw CodecError(.malformed, "more relayed messages than a pairing has") }
        var messages: [[UInt8]] = []
        for _ in 0..<count {
            let length = Int(try reader.u32())
            guard length <= Self.maximumSize else { throw CodecError(.malformed, "a relayed message over the size limit") }
            messages.append(Array(try reader.take(length)))
        }
        self.messages = messages
    }
}
