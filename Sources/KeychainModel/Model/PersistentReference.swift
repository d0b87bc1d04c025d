import FoundationEssentials

/// Apple's persistent item reference (spec 2.7).
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
        let raw = Array(bytes)
        guard raw.count == 20 || raw.count == 12,
              let name = String(exactUTF8: raw[0..<4]),
              let itemClass = ItemClass(rawValue: name) else { return nil }
        if raw.count == 20 {
            self = .uuid(itemClass, Data(raw[4...]))
        } else {
            let id = raw[4...].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            self = .rowID(itemClass, id)
        }
    }

    /// The bytes of the UUID form.
    package var bytes: Data {
        switch self {
        case .uuid(let c, let id): return Data(c.rawValue.utf8) + id
        case .rowID(let c, let row):
            return Data(c.rawValue.utf8) + Data((0..<8).reversed().map { UInt8(truncatingIfNeeded: row >> (8 * $0)) })
        }
    }
}
