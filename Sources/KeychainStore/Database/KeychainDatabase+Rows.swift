import Crypto
import FoundationEssentials

/// Turning items into row values and back.
extension KeychainDatabase.Session {
    /// The keyed hash of one attribute value, as stored in its search column.
    func indexHash(_ itemClass: ItemClass, _ attribute: AttributeDescriptor, _ value: AttributeValue) throws(StoreError) -> Data {
        // `<class> NUL <attribute> NUL <match key>`
        let key = value.matchKey(for: attribute.kind)
        // An item without a discriminator (every item but a Secret Service one beside its
        // namesake) holds the empty blob: the column a file gains when opened (KeychainSchema)
        // is filled without any key, and says nothing an attacker could not count anyway.
        if itemClass == .genericPassword, attribute.name == SecretServiceAttributes.discriminatorName, value.comparableBytes.isEmpty {
            return Data()
        }
        var input: [UInt8] = []
        input.reserveCapacity(itemClass.rawValue.utf8.count + attribute.name.utf8.count + 2 + key.count)
        input.append(contentsOf: itemClass.rawValue.utf8)
        input.append(0)
        input.append(contentsOf: attribute.name.utf8)
        input.append(0)
        input.append(contentsOf: key)
        return try keys.hasher().hash(input)
    }

    /// The value an attribute has for matching: its stored value, or the hidden default of
    /// `vwht`/`tkid`/`ggrp` when it was never set.
    static func effectiveValue(_ attribute: AttributeDescriptor, in attributes: [String: AttributeValue]) -> AttributeValue? {
        attributes[attribute.name] ?? (attribute.isHiddenWhenUnset ? attribute.defaultValue : nil)
    }

    /// The search-column values of a row, in schema order.
    func columnValues(_ itemClass: ItemClass, _ attributes: [String: AttributeValue]) throws(StoreError) -> [SQLiteValue] {
        try itemClass.schema.attributes.map { (attribute) throws(StoreError) -> SQLiteValue in
            guard let value = Self.effectiveValue(attribute, in: attributes) else { return .null }
            return .blob(try indexHash(itemClass, attribute, value))
        }
    }

    /// Apple's `sha1` item digest: SHA-1 over the item's attributes (minus `sha1`) and secret.
    static func digest(_ attributes: [String: AttributeValue], secret: Data?) -> Data {
        var writer = ByteWriter()
        var hashed = attributes
        hashed[.sha1] = nil
        AttributeCodec.encode(hashed, into: &writer)
        var bytes = Data(writer.bytes)
        if let secret { bytes.append(secret) }
        return KeychainCrypto.sha1(bytes)
    }

    /// Encrypts an item into the values of `keyclass, tomb, metadata, secret, a_*...`.
    func sealRow(_ itemClass: ItemClass, persistentID: Data, keyClass: KeyClass, metadata: ItemMetadata,
                 secret: Data?, tombstone: Bool) throws(StoreError) -> [SQLiteValue] {
        try sealBlobs(itemClass, persistentID: persistentID, keyClass: keyClass, metadata: metadata, secret: secret, tombstone: tombstone)
            + (try columnValues(itemClass, metadata.attributes))
    }

    /// The first ``blobColumns`` of ``rowColumns``: the key class, the tombstone flag and the two
    /// sealed blobs, without the search columns' keyed hashes.
    func sealBlobs(_ itemClass: ItemClass, persistentID: Data, keyClass: KeyClass, metadata: ItemMetadata,
                   secret: Data?, tombstone: Bool) throws(StoreError) -> [SQLiteValue] {
        let classKeys = try keys.keys(for: keyClass)
        let cipher = RowCipher(table: itemClass.rawValue, persistentID: persistentID, keyClass: keyClass,
                               tombstone: tombstone, format: format)
        let sealedMetadata = try cipher.sealMetadata(metadata, keys: classKeys)
        let sealedSecret: SQLiteValue = try secret.map { (s: Data) throws(StoreError) -> SQLiteValue in
            .blob(try cipher.sealSecret(s, tag: metadata.secretTag, keys: classKeys))
        } ?? .null
        return [.text(keyClass.rawValue), .integer(tombstone ? 1 : 0), .blob(sealedMetadata), sealedSecret]
    }

    /// The columns that ``sealBlobs`` values follow, before the search columns.
    static let blobColumns = ["keyclass", "tomb", "metadata", "secret"]

    /// The column list that ``sealRow`` values follow.
    static func rowColumns(_ itemClass: ItemClass) -> [String] {
        blobColumns + itemClass.schema.attributes.map(\.column)
    }

    /// Decrypts a row selected as `rowid, persistref, keyclass, tomb, metadata, secret`.
    func openRow(_ itemClass: ItemClass, _ row: [SQLiteValue], withSecret: Bool) throws(StoreError) -> StoredItem {
        guard let rowID = row[0].integer, let persistentID = row[1].blob, persistentID.count == 16,
              let keyClassName = row[2].text, let tomb = row[3].integer, let sealedMetadata = row[4].blob else {
            throw StoreError(.decode, "an item row is malformed")
        }
        guard let keyClass = KeyClass(rawValue: keyClassName) else { throw StoreError(.decode, "an item row has an unknown key class") }
        let classKeys = try keys.keys(for: keyClass)
        let cipher = RowCipher(table: itemClass.rawValue, persistentID: persistentID, keyClass: keyClass,
                               tombstone: tomb != 0, format: format)
        let metadata = try cipher.openMetadata(sealedMetadata, keys: classKeys)
        guard metadata.attributes[.accessible] == .string(keyClass.rawValue) else {
            throw StoreError(.decode, "an item's accessibility does not match its key class")
        }
        var secret: Data?
        if withSecret || metadata.hasSecret {
            switch (metadata.hasSecret, row[5]) {
            case (true, .blob(let blob)):
                if withSecret { secret = try cipher.openSecret(blob, tag: metadata.secretTag, keys: classKeys) }
            case (false, .null): break
            default: throw StoreError(.decode, "an item's secret is missing or unexpected")
            }
        }
        return StoredItem(itemClass: itemClass, rowID: rowID, persistentReference: .uuid(itemClass, persistentID),
                          isTombstone: tomb != 0, attributes: metadata.attributes,
                          accessControlFlags: metadata.accessControlFlags, secret: secret, access: metadata.access)
    }
}
