import FoundationEssentials

/// Appends little-endian integers and length-prefixed fields to a buffer.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    // One append of the integer's little-endian bytes, not one a byte.
    package mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func raw<C: Collection>(_ c: C) where C.Element == UInt8 { bytes.append(contentsOf: c) }
    // The generic `raw` is compiled once, unspecialized, for the other modules that call it: it
    // walks its collection through witness tables, element by element (docs/benchmarks.md,
    // "Instructions per call"). These are compiled here for their types, each one copy.
    /// An array's bytes in one copy.
    package mutating func raw(_ array: [UInt8]) { bytes.append(contentsOf: array) }
    /// A slice's bytes in one copy.
    package mutating func raw(_ slice: ArraySlice<UInt8>) { bytes.append(contentsOf: slice) }
    /// The buffer's bytes in one copy.
    package mutating func raw(_ buffer: UnsafeRawBufferPointer) { bytes.append(contentsOf: buffer) }
    /// A text's UTF-8 in one copy.
    package mutating func raw(_ utf8: String.UTF8View) { bytes.append(contentsOf: utf8) }
    /// `count` zero bytes.
    package mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }
    /// `Data`'s bytes in one copy (the generic append walks `Data`'s iterator).
    package mutating func raw(_ data: Data) { data.withUnsafeBytes { bytes.append(contentsOf: $0) } }

    /// The bytes written, handed over without a copy; the writer is empty after. A buffer that
    /// holds a secret then exists once, for its new owner to wipe.
    package mutating func takeBytes() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &bytes)
        return taken
    }
}

/// Reads what ``ByteWriter`` wrote; every read is bounds-checked and throws `.decode` past the end.
package struct ByteReader {
    // Not `@inlinable`: Swift does not inline a `package` type's members into other modules
    // (KeyhavenAgentClient's WireContainers.swift says what that costs and how it is met).
    let bytes: [UInt8]
    private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var remaining: Int { bytes.count - offset }

    package mutating func take(_ count: Int) throws(CodecError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw CodecError(.truncated, "the data is truncated") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// The next `count` bytes as `Data` (`Data.init(copying:)` says why not `Data(_:)`).
    package mutating func takeData(_ count: Int) throws(CodecError) -> Data {
        Data(copying: try take(count))
    }

    package mutating func u8() throws(CodecError) -> UInt8 {
        guard remaining >= 1 else { throw CodecError(.truncated, "the data is truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func u16() throws(CodecError) -> UInt16 { UInt16(truncatingIfNeeded: try littleEndian(2)) }
    package mutating func u32() throws(CodecError) -> UInt32 { UInt32(truncatingIfNeeded: try littleEndian(4)) }
    package mutating func u64() throws(CodecError) -> UInt64 { try littleEndian(8) }

    /// The next `width` bytes as a little-endian integer.
    mutating func littleEndian(_ width: Int) throws(CodecError) -> UInt64 {
        guard remaining >= width else { throw CodecError(.truncated, "the data is truncated") }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += width
        return value
    }
}

extension Data {
    /// A copy of `bytes`, taken from their buffer: `Data`'s generic initializer, given a slice,
    /// boxes it in an existential (a heap allocation and a cast) to find its storage.
    package init(copying bytes: ArraySlice<UInt8>) {
        self = bytes.withUnsafeBufferPointer { Data(buffer: $0) }
    }
}
