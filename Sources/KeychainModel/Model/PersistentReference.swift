import FoundationEssentials

/// Apple's persistent item reference (`_SecItemMakePersistentRef` in `SecItem.m`).
///
/// The form we hand out is the UUID form: the class's 4 ASCII bytes and the item's 16-byte
/// `persistref`. The older row-id form (class + 8-byte big-endian row id) is accepted in queries.
package enum PersistentReference: Sendable, Hashable {
    case uuid(ItemClass, Data)
    case rowID(ItemClass, Int64)

    package var itemClass: ItemClass {
        switch self {
        case .uuid(let c, _), .rowID(let c, _): return c
        }
    }

    /// Parses a reference; nil if it is not one of the two forms of a class we store.
    package init?(_ bytes: Data) {
        // Copied through its buffer: `Array(bytes)` walks `Data`'s iterator byte by byte.
        self.init(bytes: bytes.withUnsafeBytes { ArraySlice($0) })
    }

    /// Parses a reference from its bytes as the agent protocol carries them.
    package init?(bytes raw: ArraySlice<UInt8>) {
        guard raw.count == 20 || raw.count == 12, let itemClass = ItemClass(utf8: raw.prefix(4)) else { return nil }
        let rest = raw.dropFirst(4)
        if raw.count == 20 {
            self = .uuid(itemClass, Data(copying: rest))
        } else {
            self = .rowID(itemClass, rest.reduce(Int64(0)) { $0 << 8 | Int64($1) })
        }
    }

    /// Its bytes: the class's four ASCII bytes, then the 16-byte UUID or the big-endian row id.
    package var bytes: Data {
        var writer = ByteWriter()
        writeBytes(to: &writer)
        return Data(copying: writer.bytes[...])
    }

    /// Writes ``bytes`` (without their length): the agent protocol writes a reference into each
    /// answer, and making a `Data` of it first would cost more than the rest of the reference's
    /// encoding.
    package func writeBytes(to writer: inout ByteWriter) {
        switch self {
        case .uuid(let c, let id):
            writer.raw(c.asciiName)
            writer.raw(id)
        case .rowID(let c, let row):
            writer.raw(c.asciiName)
            withUnsafeBytes(of: UInt64(bitPattern: row).bigEndian) { writer.raw($0) }
        }
    }

    /// How many bytes ``bytes`` has.
    package var byteCount: Int {
        switch self {
        case .uuid(_, let id): return 4 + id.count
        case .rowID: return 12
        }
    }
}
