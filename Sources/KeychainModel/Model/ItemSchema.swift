import FoundationEssentials

/// The attributes of one item class: Apple's schema (`SecItemSchema.c`) with the flags that matter
/// for storage. Every attribute is searchable (Apple's flag L), stored in the search columns
/// as a keyed hash.
package struct ItemSchema: Sendable {
    package let attributes: [AttributeDescriptor]
    private let byName: [String: AttributeDescriptor]

    init(_ attributes: [AttributeDescriptor]) {
        self.attributes = attributes
        self.byName = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
    }

    package subscript(name: String) -> AttributeDescriptor? { byName[name] }
    package var primaryKey: [AttributeDescriptor] { attributes.filter(\.isPrimaryKey) }

    // MARK: - Building blocks

    private enum Flag { case p, i, a, e, z, hidden }

    private static func attr(_ name: String, _ kind: AttributeKind, _ flags: Set<Flag> = [.a]) -> AttributeDescriptor {
        let defaultValue: AttributeValue?
        if flags.contains(.e) || flags.contains(.hidden) {
            defaultValue = kind == .data ? .data(.init()) : .string("")
        } else if flags.contains(.z) {
            defaultValue = kind == .date ? .date(Date(timeIntervalSinceReferenceDate: 0)) : .number(0)
        } else {
            defaultValue = nil
        }
        return AttributeDescriptor(
            name: name, kind: kind, isPrimaryKey: flags.contains(.p), isIndexed: flags.contains(.i),
            isReturned: flags.contains(.a), defaultValue: defaultValue, isHiddenWhenUnset: flags.contains(.hidden))
    }

    /// Attributes every class has (`SecItemSchema.c`), minus the server-private bookkeeping ones.
    private static let common: [AttributeDescriptor] = [
        attr("cdat", .date), attr("mdat", .date), attr("labl", .blob),
        attr("agrp", .string, [.p, .a]), attr("pdmn", .string), attr("sync", .number, [.p, .a, .z]),
        attr("sha1", .data, [.i, .a]),
        attr("vwht", .string, [.p, .i, .a, .hidden]), attr("tkid", .string, [.p, .i, .a, .hidden]),
        attr("ggrp", .string, [.p, .i, .a, .hidden]),
        attr("sysb", .number), attr("pcss", .number), attr("pcsk", .blob), attr("pcsi", .blob),
    ]

    /// The attributes generic and internet passwords share (`SecItemSchema.c`).
    private static let passwordCommon: [AttributeDescriptor] = [
        attr("desc", .blob), attr("icmt", .blob), attr("crtr", .number), attr("type", .number, [.i, .a]),
        attr("scrp", .number), attr("invi", .number), attr("nega", .number), attr("cusi", .number),
        attr("prot", .blob),
    ]

    static let genericPassword = ItemSchema(common + passwordCommon + [
        attr("alis", .blob),
        attr("acct", .blob, [.p, .i, .a, .e]), attr("svce", .blob, [.p, .i, .a, .e]), attr("gena", .blob),
        // Keyhaven's own: tells apart Secret Service items that share the rest of the key
        // (``SecretServiceAttributes/discriminatorName``); never a caller's to give or see.
        attr(SecretServiceAttributes.discriminatorName, .string, [.p, .hidden]),
    ])

    static let internetPassword = ItemSchema(common + passwordCommon + [
        attr("alis", .blob, [.i, .a]),
        attr("acct", .blob, [.p, .i, .a, .e]),
        attr("sdmn", .blob, [.p, .i, .a, .e]), attr("srvr", .blob, [.p, .i, .a, .e]),
        attr("ptcl", .number, [.p, .i, .a, .z]), attr("atyp", .blob, [.p, .i, .a, .e]),
        attr("port", .number, [.p, .i, .a, .z]), attr("path", .blob, [.p, .i, .a, .e]),
    ])

    /// Keys (`SecItemSchema.c`'s `keys`): `klbl` is the SHA-1 of the public key, joined with certificates' `pkhh`.
    static let key = ItemSchema(common + [
        attr("kcls", .number, [.p, .i, .a, .z]), attr("alis", .blob, [.i, .a]),
        attr("perm", .number), attr("priv", .number), attr("modi", .number),
        attr("klbl", .data, [.p, .i, .a, .e]), attr("atag", .blob, [.p, .i, .a, .e]),
        attr("crtr", .number, [.p, .i, .a, .z]), attr("type", .number, [.p, .i, .a, .z]),
        attr("bsiz", .number, [.p, .i, .a, .z]), attr("esiz", .number, [.p, .i, .a, .z]),
        attr("sdat", .date, [.p, .i, .a, .z]), attr("edat", .date, [.p, .i, .a, .z]),
        attr("sens", .number), attr("asen", .number), attr("extr", .number), attr("next", .number),
        attr("encr", .number, [.i, .a]), attr("decr", .number, [.i, .a]), attr("drve", .number, [.i, .a]),
        attr("sign", .number, [.i, .a]), attr("vrfy", .number, [.i, .a]),
        attr("snrc", .number), attr("vyrc", .number),
        attr("wrap", .number, [.i, .a]), attr("unwp", .number, [.i, .a]),
    ])

    /// Certificates (`SecItemSchema.c`'s `cert`): `pkhh` is the SHA-1 of the public key, joined with keys' `klbl`.
    static let certificate = ItemSchema(common + [
        attr("ctyp", .number, [.p, .i, .a, .z]), attr("cenc", .number),
        attr("alis", .blob, [.i, .a]), attr("subj", .data, [.i, .a]),
        attr("issr", .data, [.p, .i, .a, .e]), attr("slnr", .data, [.p, .i, .a, .e]),
        attr("skid", .data, [.i, .a]), attr("pkhh", .data, [.i, .a]),
    ])
}
