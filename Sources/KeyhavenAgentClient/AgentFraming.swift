import KeychainModel

/// The frame format: a 4-byte big-endian length, then that many bytes: the protocol version
/// (one byte), the keychain home the sender means (optional text), and the body.
package enum AgentFraming {
    package static let version: UInt8 = 11
    /// The largest answer a client accepts (many items at once); a larger length ends the connection.
    package static let maximumFrame = 48 << 20
    /// The largest request the agent accepts: one item's largest secret (16 MiB) and attributes.
    /// A larger length ends that client's connection before its bytes are read.
    package static let maximumRequest = 20 << 20
    /// The most clients the agent serves at once; more are closed at once. With one request
    /// read at a time per client, the agent never buffers more than this many requests.
    package static let maximumConnections = 64
    /// The most bytes an `echo` carries back.
    package static let maximumEcho = 64 << 10

    /// A whole frame, length first. `home`, in requests: the keychain home the client means; an
    /// agent serving another one refuses the request, so the client needs no `hello` first.
    package static func encode(_ body: some WireCodable, home: String? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        writer.raw([0, 0, 0, 0, version])
        writer.optional(home)
        body.write(to: &writer)
        // Taken, not copied: a frame can hold a secret, and its one copy is what the caller wipes.
        var bytes = writer.takeBytes()
        let length = UInt32(bytes.count - 4)
        for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (8 * (3 - i))) }
        return bytes
    }

    /// A frame's body (the bytes after the length).
    package static func decode<Body: WireCodable>(_ type: Body.Type, from payload: [UInt8]) throws(StoreError) -> Body {
        try decodeWithHome(type, from: payload).body
    }

    /// A frame's body and the home the sender named, if any. Another version is `.wrongVersion`;
    /// anything malformed, truncated or followed by extra bytes is `.decode`.
    package static func decodeWithHome<Body: WireCodable>(_ type: Body.Type, from payload: [UInt8]) throws(StoreError) -> (body: Body, home: String?) {
        var reader = ByteReader(payload)
        guard let sent = try? reader.u8() else { throw StoreError(.decode, "an empty agent message") }
        guard sent == version else {
            throw StoreError(.wrongVersion, "the other side speaks agent protocol \(sent == UInt8(ascii: "{") ? 1 : Int(sent)), not \(version)")
        }
        let home: String?
        let body: Body
        do throws(CodecError) {
            home = try reader.optional(String.self)
            body = try Body(from: &reader)
        } catch {
            throw StoreError(.decode, "a malformed agent message (\(error.message))")
        }
        guard reader.remaining == 0 else { throw StoreError(.decode, "a malformed agent message (trailing bytes)") }
        return (body, home)
    }
}
