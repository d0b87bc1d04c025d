import KeychainModel

// The agent's messages read and write their optional and array fields through these, not through
// KeychainModel's `Optional` and `Array` conformances. Those are compiled once there, generic, and
// called from this module they look up the container's type metadata at run time on every field:
// Swift specializes across modules neither a `package` conformance of a standard-library type nor
// an `@inlinable` member of a `package` type. Declared in this module, these are specialized for
// the messages' types. The format is the conformances' (`ByteReader.presence()` and `count()`).

extension ByteReader {
    mutating func optional<Value: WireCodable>(_ type: Value.Type) throws(CodecError) -> Value? {
        try presence() ? try Value(from: &self) : nil
    }

    mutating func optionalArray<Element: WireCodable>(of type: Element.Type) throws(CodecError) -> [Element]? {
        try presence() ? try array(of: type) : nil
    }

    mutating func array<Element: WireCodable>(of type: Element.Type) throws(CodecError) -> [Element] {
        let count = try count()
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try Element(from: &self)) }
        return elements
    }
}

extension ByteWriter {
    mutating func optional<Value: WireCodable>(_ value: Value?) {
        (value != nil).write(to: &self)
        value?.write(to: &self)
    }

    mutating func optionalArray<Element: WireCodable>(_ elements: [Element]?) {
        (elements != nil).write(to: &self)
        if let elements { array(elements) }
    }

    mutating func array<Element: WireCodable>(_ elements: [Element]) {
        u32(UInt32(elements.count))
        for element in elements { element.write(to: &self) }
    }
}
