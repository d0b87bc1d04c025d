import FoundationEssentials

/// A value the agent protocol carries in its binary form (docs/agent-protocol.md, "Encoding").
///
/// Written by hand, not with `Codable`: no run-time type lookups (they were most of a command's
/// time), a format that does not change when Swift names do, and every read bounds-checked.
package protocol WireCodable {
    func write(to writer: inout ByteWriter)
    init(from reader: inout ByteReader) throws(CodecError)
}

extension WireCodable {
    /// This value alone, encoded.
    package var wireBytes: [UInt8] {
        var writer = ByteWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Decodes a value that must fill `bytes` exactly.
    package init(wireBytes bytes: [UInt8]) throws(CodecError) {
        var reader = ByteReader(bytes)
        self = try Self(from: &reader)
        guard reader.remaining == 0 else { throw CodecError(.malformed, "trailing bytes after a value") }
    }

    /// Decodes a value the keychain stored: bytes that do not decode are damaged data
    /// (``StoreError/Code/decode``).
    package init(storedBytes bytes: [UInt8]) throws(StoreError) {
        do throws(CodecError) { self = try Self(wireBytes: bytes) } catch { throw StoreError(error) }
    }
}

extension Bool: WireCodable {
    package func write(to writer: inout ByteWriter) { writer.u8(self ? 1 : 0) }
    package init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.u8() {
        case 0: self = false
        case 1: self = true
        default: throw CodecError(.malformed, "a boolean that is neither 0 nor 1")
        }
    }
}

extension UInt32: WireCodable {
    package func write(to writer: inout ByteWriter) { writer.u32(self) }
    package init(from reader: inout ByteReader) throws(CodecError) { self = try reader.u32() }
}

extension UInt64: WireCodable {
    package func write(to writer: inout ByteWriter) { writer.u64(self) }
    package init(from reader: inout ByteReader) throws(CodecError) { self = try reader.u64() }
}

extension Int64: WireCodable {
    package func write(to writer: inout ByteWriter) { writer.u64(UInt64(bitPattern: self)) }
    package init(from reader: inout ByteReader) throws(CodecError) { self = Int64(bitPattern: try reader.u64()) }
}

extension Int32: WireCodable {
    package func write(to writer: inout ByteWriter) { writer.u32(UInt32(bitPattern: self)) }
    package init(from reader: inout ByteReader) throws(CodecError) { self = Int32(bitPattern: try reader.u32()) }
}

/// A u32 length, then the bytes.
extension Data: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(count))
        writer.raw(self)
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        self = try reader.takeData(Int(try reader.u32()))
    }
}

/// A u32 length, then UTF-8; invalid UTF-8 is refused, not repaired.
extension String: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(utf8.count))
        writer.raw(utf8)
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        let bytes = try reader.lengthPrefixed()
        guard let text = String(exactUTF8: bytes) else { throw CodecError(.malformed, "text that is not UTF-8") }
        self = text
    }
}

extension ByteReader {
    /// The u8 flag before an optional value: whether the value follows (0 or 1; anything else is
    /// `.decode`).
    package mutating func presence() throws(CodecError) -> Bool { try Bool(from: &self) }

    /// A u32 length, then that many bytes (the wire form of bytes and text), without a copy.
    package mutating func lengthPrefixed() throws(CodecError) -> ArraySlice<UInt8> { try take(Int(try u32())) }

    /// The u32 count before an array's elements or a dictionary's pairs. It is checked against
    /// the bytes left (every element takes at least one), so a forged count cannot make a huge
    /// allocation.
    package mutating func count() throws(CodecError) -> Int {
        let count = Int(try u32())
        guard count <= remaining else { throw CodecError(.tooLarge, "a count larger than the message") }
        return count
    }
}

/// A u8 presence flag (0 or 1), then the value.
extension Optional: WireCodable where Wrapped: WireCodable {
    package func write(to writer: inout ByteWriter) {
        (self != nil).write(to: &writer)
        self?.write(to: &writer)
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        self = try reader.presence() ? try Wrapped(from: &reader) : nil
    }
}

/// A u32 count (``ByteReader/count()``), then the elements.
extension Array: WireCodable where Element: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(count))
        for element in self { element.write(to: &writer) }
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        let count = try reader.count()
        self = []
        reserveCapacity(count)
        for _ in 0..<count { append(try Element(from: &reader)) }
    }
}

/// A u32 count, then key and value pairs, keys in sorted order (one encoding per dictionary).
/// A repeated key is refused.
extension Dictionary: WireCodable where Key == String, Value: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(count))
        // The pairs sorted, not the keys: no lookup (and hash) of each key again.
        for (key, value) in sorted(by: { $0.key < $1.key }) {
            key.write(to: &writer)
            value.write(to: &writer)
        }
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        let count = try reader.count()
        self = [:]
        // Not for none: reserving on the empty dictionary allocates storage it would not need.
        if count > 0 { reserveCapacity(count) }
        for _ in 0..<count {
            let key = try String(from: &reader)
            guard updateValue(try Value(from: &reader), forKey: key) == nil else { throw CodecError(.malformed, "a repeated key") }
        }
    }
}
