
/// One version of a record as the merge sees it, once opened: who wrote it and when, whether it is
/// a tombstone, the item's primary key and what tells its content from another's (opaque here: the
/// engine gives the SHA-256 of the payload, so the merge holds no plaintext).
package struct RecordVersion: Hashable, Sendable {
    package let record: RecordID
    package let version: UInt64
    package let device: DeviceID
    package let isDeleted: Bool
    package let primaryKey: [UInt8]
    package let content: [UInt8]

    package init(record: RecordID, version: UInt64, device: DeviceID, isDeleted: Bool, primaryKey: [UInt8], content: [UInt8]) {
        (self.record, self.version, self.device, self.isDeleted) = (record, version, device, isDeleted)
        (self.primaryKey, self.content) = (primaryKey, content)
    }

    /// Whether this version wins over `other` of the same record: the higher clock, then the
    /// higher device id (every device decides the same way), then the tombstone, then the content,
    /// then the primary key, then the record id: a total order over distinct versions (of one record,
    /// or of two records competing for one primary key), so that even versions one device should
    /// never have written (one clock reading, two contents) merge the same everywhere.
    package func outranks(_ other: RecordVersion) -> Bool {
        if version != other.version { return version > other.version }
        if device != other.device { return other.device < device }
        if isDeleted != other.isDeleted { return isDeleted }
        if content != other.content { return other.content.lexicographicallyPrecedes(content) }
        if primaryKey != other.primaryKey { return other.primaryKey.lexicographicallyPrecedes(primaryKey) }
        return other.record < record
    }
}

/// An item as the keychain should hold it after the merge: the surviving record of its primary key
/// and the content it takes.
package struct LiveItem: Hashable, Sendable {
    package let record: RecordID
    package let version: RecordVersion
}
