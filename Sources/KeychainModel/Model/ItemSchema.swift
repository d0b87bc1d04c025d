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
    package subscript(_ name: AttributeName) -> AttributeDescriptor? { byName[name.code] }
    package var primaryKey: [AttributeDescriptor] { attributes.filter(\.isPrimaryKey) }

    // MARK: - Building blocks

    private enum Flag { case p, i, a, e, z, hidden }

    private static func attr(_ name: AttributeName, _ kind: AttributeKind, _ flags: Set<Flag> = [.a]) -> AttributeDescriptor {
        let defaultValue: AttributeValue?
        if flags.contains(.e) || flags.contains(.hidden) {
            defaultValue = kind == .data ? .data(.init()) : .string("")
        } else if flags.contains(.z) {
            defaultValue = kind == .date ? .date(Date(timeIntervalSinceReferenceDate: 0)) : .number(0)
        } else {
            defaultValue = nil
        }
        return AttributeDescriptor(
            name: name.code, kind: kind, isPrimaryKey: flags.contains(.p), isIndexed: flags.contains(.i),
            isReturned: flags.contains(.a), defaultValue: defaultValue, isHiddenWhenUnset: flags.contains(.hidden))
    }

    /// Attributes every class has (`SecItemSchema.c`), minus the server-private bookkeeping ones.
    private static let common: [AttributeDescriptor] = [
        attr(.creationDate, .date), attr(.modificationDate, .date), attr(.label, .blob),
        attr(.accessGroup, .string, [.p, .a]), attr(.accessible, .string), attr(.synchronizable, .number, [.p, .a, .z]),
        attr(.sha1, .data, [.i, .a]),
        attr(.syncViewHint, .string, [.p, .i, .a, .hidden]), attr(.tokenID, .string, [.p, .i, .a, .hidden]),
        attr(.sharingGroup, .string, [.p, .i, .a, .hidden]),
        attr(.sysBound, .number), attr(.pcsPlaintextServiceIdentifier, .number), attr(.pcsPlaintextPublicKey, .blob), attr(.pcsPlaintextPublicIdentity, .blob),
    ]

    /// The attributes generic and internet passwords share (`SecItemSchema.c`).
    private static let passwordCommon: [AttributeDescriptor] = [
        attr(.description, .blob), attr(.comment, .blob), attr(.creator, .number), attr(.type, .number, [.i, .a]),
        attr(.scriptCode, .number), attr(.isInvisible, .number), attr(.isNegative, .number), attr(.hasCustomIcon, .number),
        attr(.protection, .blob),
    ]

    static let genericPassword = ItemSchema(common + passwordCommon + [
        attr(.alias, .blob),
        attr(.account, .blob, [.p, .i, .a, .e]), attr(.service, .blob, [.p, .i, .a, .e]), attr(.generic, .blob),
        // Keyhaven's own: tells apart Secret Service items that share the rest of the key
        // (``SecretServiceAttributes/discriminatorName``); never a caller's to give or see.
        attr(.secretServiceDiscriminator, .string, [.p, .hidden]),
    ])

    static let internetPassword = ItemSchema(common + passwordCommon + [
        attr(.alias, .blob, [.i, .a]),
        attr(.account, .blob, [.p, .i, .a, .e]),
        attr(.securityDomain, .blob, [.p, .i, .a, .e]), attr(.server, .blob, [.p, .i, .a, .e]),
        attr(.protocol, .number, [.p, .i, .a, .z]), attr(.authenticationType, .blob, [.p, .i, .a, .e]),
        attr(.port, .number, [.p, .i, .a, .z]), attr(.path, .blob, [.p, .i, .a, .e]),
    ])

    /// Keys (`SecItemSchema.c`'s `keys`): `klbl` is the SHA-1 of the public key, joined with certificates' `pkhh`.
    static let key = ItemSchema(common + [
        attr(.keyClass, .number, [.p, .i, .a, .z]), attr(.alias, .blob, [.i, .a]),
        attr(.isPermanent, .number), attr(.isPrivate, .number), attr(.isModifiable, .number),
        attr(.applicationLabel, .data, [.p, .i, .a, .e]), attr(.applicationTag, .blob, [.p, .i, .a, .e]),
        attr(.creator, .number, [.p, .i, .a, .z]), attr(.type, .number, [.p, .i, .a, .z]),
        attr(.keySizeInBits, .number, [.p, .i, .a, .z]), attr(.effectiveKeySize, .number, [.p, .i, .a, .z]),
        attr(.startDate, .date, [.p, .i, .a, .z]), attr(.endDate, .date, [.p, .i, .a, .z]),
        attr(.isSensitive, .number), attr(.wasAlwaysSensitive, .number), attr(.isExtractable, .number), attr(.wasNeverExtractable, .number),
        attr(.canEncrypt, .number, [.i, .a]), attr(.canDecrypt, .number, [.i, .a]), attr(.canDerive, .number, [.i, .a]),
        attr(.canSign, .number, [.i, .a]), attr(.canVerify, .number, [.i, .a]),
        attr(.canSignRecover, .number), attr(.canVerifyRecover, .number),
        attr(.canWrap, .number, [.i, .a]), attr(.canUnwrap, .number, [.i, .a]),
    ])

    /// Certificates (`SecItemSchema.c`'s `cert`): `pkhh` is the SHA-1 of the public key, joined with keys' `klbl`.
    static let certificate = ItemSchema(common + [
        attr(.certificateType, .number, [.p, .i, .a, .z]), attr(.certificateEncoding, .number),
        attr(.alias, .blob, [.i, .a]), attr(.subject, .data, [.i, .a]),
        attr(.issuer, .data, [.p, .i, .a, .e]), attr(.serialNumber, .data, [.p, .i, .a, .e]),
        attr(.subjectKeyID, .data, [.i, .a]), attr(.publicKeyHash, .data, [.i, .a]),
    ])
}
