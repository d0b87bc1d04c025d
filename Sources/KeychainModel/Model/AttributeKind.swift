/// How an attribute's values are converted and compared (Apple's `SecDbAttrKind`, `SecDbItem.h`).
package enum AttributeKind: Sendable, Hashable {
    /// String, data or number, kept as supplied (`acct`, `svce`, `labl`, ...).
    case blob
    /// Data; a string becomes its UTF-8 bytes.
    case data
    /// String; data is decoded as UTF-8.
    case string
    /// Integer; booleans become 0/1, decimal strings become numbers, other strings stay strings.
    case number
    /// A date.
    case date
}

/// One attribute of an item class.
package struct AttributeDescriptor: Sendable, Hashable {
    /// Apple's wire name, the value of the public constant (`kSecAttrAccount == "acct"`).
    package let name: String
    package let kind: AttributeKind
    /// Part of the class's UNIQUE constraint (flag P).
    package let isPrimaryKey: Bool
    /// Has an SQL index of its own (flag I).
    package let isIndexed: Bool
    /// Returned by `kSecReturnAttributes` (flag A).
    package let isReturned: Bool
    /// Default when absent on add: "" / 0 (flags E, Z with N). Nil: absent stays absent.
    package let defaultValue: AttributeValue?
    /// A primary-key column that is hidden when unset (`vwht`, `tkid`, `ggrp`): the column holds
    /// the empty value so the UNIQUE constraint works, but the attribute is not returned.
    package let isHiddenWhenUnset: Bool

    /// The SQL column holding this attribute's keyed hash.
    package var column: String { "a_\(name)" }
}
