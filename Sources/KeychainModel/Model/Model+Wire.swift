import FoundationEssentials

// The engine's value types as the agent protocol carries them (docs/agent-protocol.md,
// "Encoding"). Fields go in the order written here; enums by explicit tags or raw values, so
// the format does not change when Swift names do.

extension ItemClass: WireCodable {
    package func write(to writer: inout ByteWriter) { rawValue.write(to: &writer) }
    package init(from reader: inout ByteReader) throws(CodecError) {
        guard let value = ItemClass(utf8: try reader.lengthPrefixed()) else { throw CodecError(.malformed, "an unknown item class") }
        self = value
    }
}

/// A u8 tag (1 text, 2 bytes, 3 integer, 4 date as the bit pattern of seconds since 2001).
extension AttributeValue: WireCodable {
    package func write(to writer: inout ByteWriter) {
        switch self {
        case .string(let s): writer.u8(1); s.write(to: &writer)
        case .data(let d): writer.u8(2); d.write(to: &writer)
        case .number(let n): writer.u8(3); n.write(to: &writer)
        case .date(let t): writer.u8(4); writer.u64(t.timeIntervalSinceReferenceDate.bitPattern)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.u8() {
        case 1: self = .string(try String(from: &reader))
        case 2: self = .data(try Data(from: &reader))
        case 3: self = .number(try Int64(from: &reader))
        case 4: self = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.u64())))
        default: throw CodecError(.malformed, "an unknown attribute value tag")
        }
    }
}

/// Its bytes (the 20-byte UUID form or the 12-byte row-id form).
extension PersistentReference: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u32(UInt32(byteCount))
        writeBytes(to: &writer)
    }
    package init(from reader: inout ByteReader) throws(CodecError) {
        guard let reference = PersistentReference(bytes: try reader.lengthPrefixed()) else { throw CodecError(.malformed, "not a persistent reference") }
        self = reference
    }
}

extension ItemQuery: WireCodable {
    package func write(to writer: inout ByteWriter) {
        itemClass.write(to: &writer)
        criteria.write(to: &writer)
        matchAnySynchronizable.write(to: &writer)
        tombstone.write(to: &writer)
        persistentReference.write(to: &writer)
        limit.map { Int64($0) }.write(to: &writer)
        hostOrSubdomain.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(itemClass: try ItemClass(from: &reader))
        criteria = try [String: AttributeValue](from: &reader)
        matchAnySynchronizable = try Bool(from: &reader)
        tombstone = try Bool?(from: &reader)
        persistentReference = try PersistentReference?(from: &reader)
        let limit = try Int64?(from: &reader)
        guard (limit ?? 0) >= 0 else { throw CodecError(.malformed, "a negative limit") }
        self.limit = limit.map { Int(clamping: $0) }
        hostOrSubdomain = try String?(from: &reader)
    }
}

extension Caller: WireCodable {
    package func write(to writer: inout ByteWriter) {
        accessGroups.write(to: &writer)
        interactionAllowed.write(to: &writer)
        skipsUntrusted.write(to: &writer)
        presenceReuse.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(accessGroups: try [String](from: &reader), interactionAllowed: try Bool(from: &reader))
        skipsUntrusted = try Bool(from: &reader)
        presenceReuse = try UInt32(from: &reader)
    }
}

extension NewItem: WireCodable {
    package func write(to writer: inout ByteWriter) {
        itemClass.write(to: &writer)
        attributes.write(to: &writer)
        secret.write(to: &writer)
        accessControlFlags.write(to: &writer)
        access.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(itemClass: try ItemClass(from: &reader), attributes: try [String: AttributeValue](from: &reader),
                  secret: try Data?(from: &reader), accessControlFlags: try UInt64?(from: &reader), access: try ItemAccess?(from: &reader))
    }
}

extension ItemChanges: WireCodable {
    package func write(to writer: inout ByteWriter) {
        attributes.write(to: &writer)
        secret.write(to: &writer)
        accessControlFlags.write(to: &writer)
        access.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init()
        attributes = try [String: AttributeValue](from: &reader)
        secret = try Data?(from: &reader)
        accessControlFlags = try UInt64?(from: &reader)
        access = try ItemAccess?(from: &reader)
    }
}

extension StoredItem: WireCodable {
    package func write(to writer: inout ByteWriter) {
        itemClass.write(to: &writer)
        rowID.write(to: &writer)
        persistentReference.write(to: &writer)
        isTombstone.write(to: &writer)
        attributes.write(to: &writer)
        accessControlFlags.write(to: &writer)
        secret.write(to: &writer)
        access.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(itemClass: try ItemClass(from: &reader), rowID: try Int64(from: &reader),
                  persistentReference: try PersistentReference(from: &reader), isTombstone: try Bool(from: &reader),
                  attributes: try [String: AttributeValue](from: &reader), accessControlFlags: try UInt64?(from: &reader),
                  secret: try Data?(from: &reader), access: try ItemAccess?(from: &reader))
    }
}

extension KeychainStatus: WireCodable {
    package func write(to writer: inout ByteWriter) {
        hasPassword.write(to: &writer)
        isUnlocked.write(to: &writer)
        isForeign.write(to: &writer)
        isBound.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(hasPassword: try Bool(from: &reader), isUnlocked: try Bool(from: &reader), isForeign: try Bool(from: &reader),
                  isBound: try Bool(from: &reader))
    }
}

/// The header's own encoding (docs/file-format.md), as bytes.
extension LockSettings: WireCodable {
    package func write(to writer: inout ByteWriter) { Data(encoded).write(to: &writer) }
    package init(from reader: inout ByteReader) throws(CodecError) { try self.init(decoding: Array(try Data(from: &reader))) }
}
