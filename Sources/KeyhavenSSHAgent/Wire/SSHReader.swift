/// Reads the SSH wire encoding (RFC 4251, section 5): bytes, booleans, big-endian integers,
/// length-prefixed strings and mpints, each checked against what is left.
package struct SSHReader: Sendable {
    private var bytes: ArraySlice<UInt8>

    package init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { bytes.isEmpty }

    package mutating func byte() throws(SSHAgentError) -> UInt8 {
        guard let first = bytes.first else { throw SSHAgentError(.malformed, "the message ends early") }
        bytes = bytes.dropFirst()
        return first
    }

    /// A boolean: any byte but 0 is true (RFC 4251).
    package mutating func bool() throws(SSHAgentError) -> Bool { try byte() != 0 }

    package mutating func uint32() throws(SSHAgentError) -> UInt32 {
        let raw = try take(4)
        return raw.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A string's bytes (a uint32 length, then that many bytes).
    package mutating func uint64() throws(SSHAgentError) -> UInt64 {
        (UInt64(try uint32()) << 32) | UInt64(try uint32())
    }

    package mutating func string() throws(SSHAgentError) -> [UInt8] {
        let length = try uint32()
        return Array(try take(Int(length)))
    }

    /// A string that must be UTF-8 text (a key type, an extension's name, a comment).
    package mutating func text() throws(SSHAgentError) -> String {
        let raw = try string()
        guard let text = String(validating: raw, as: UTF8.self) else { throw SSHAgentError(.malformed, "a name is not UTF-8") }
        return text
    }

    /// A non-negative mpint's magnitude, big-endian, without leading zero bytes.
    package mutating func mpint() throws(SSHAgentError) -> [UInt8] {
        let raw = try string()
        if let first = raw.first, first & 0x80 != 0 { throw SSHAgentError(.malformed, "a negative integer") }
        if raw.count >= 2, raw[0] == 0, raw[1] & 0x80 == 0 { throw SSHAgentError(.malformed, "an integer with a needless leading zero") }
        return Array(raw.drop { $0 == 0 })
    }

    /// The bytes not read yet, all of them.
    package mutating func rest() -> [UInt8] {
        defer { bytes = bytes[bytes.endIndex...] }
        return Array(bytes)
    }

    /// Throws unless every byte has been read.
    package func finish() throws(SSHAgentError) {
        guard bytes.isEmpty else { throw SSHAgentError(.malformed, "\(bytes.count) bytes after the message's end") }
    }

    private mutating func take(_ count: Int) throws(SSHAgentError) -> ArraySlice<UInt8> {
        guard count <= bytes.count else { throw SSHAgentError(.malformed, "a field runs past the message's end") }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }
}
