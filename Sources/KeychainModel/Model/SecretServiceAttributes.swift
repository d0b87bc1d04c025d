import FoundationEssentials

/// The freedesktop Secret Service's view of a generic password: its lookup attributes (any
/// string pairs a client chose) and the content type of its secret (docs/secret-service.md).
///
/// Kept in the item as the attribute ``attributeName`` (encrypted with the other attributes,
/// synced with them), and searchable through keyed hashes of each pair in the keychain's
/// `genp_ssattr` table (docs/file-format.md). `service` stands for the item's `svce`, and
/// `account`, `username` and `user` for its `acct`, so both worlds see the same item.
package struct SecretServiceAttributes: Sendable, Equatable, WireCodable {
    /// The lookup attributes, as the client gave them.
    package var attributes: [String: String]
    /// The secret's MIME type (`text/plain` unless a client said otherwise).
    package var contentType: String

    /// The item attribute that holds this value: not one of Apple's, never returned by
    /// `SecItemCopyMatching`, refused from a caller's dictionary.
    package static let attributeName = "khss"
    /// The generic-password attribute, part of the primary key, that lets Secret Service items
    /// with the same service and account coexist (the spec's `CreateItem` without `replace`):
    /// empty, and then absent, for every item the keychain API makes; random for an item the
    /// Secret Service adds beside another with its key (docs/secret-service.md, "Items"). Not
    /// one of Apple's: `SecItemCopyMatching` does not return it and no caller may give it.
    package static let discriminatorName = AttributeName.secretServiceDiscriminator.code
    /// The item attributes that are Keyhaven's bookkeeping, never a caller's.
    package static let privateNames: Set<String> = [attributeName, discriminatorName]
    /// The Secret Service attribute that is the item's service (`svce`).
    package static let serviceKey = "service"
    /// The Secret Service attributes that are the item's account (`acct`), in order of preference.
    package static let accountKeys = ["account", "username", "user"]
    /// Most pairs one item may carry, and most bytes for one name or value.
    package static let maximumCount = 64
    package static let maximumLength = 4096

    package init(attributes: [String: String], contentType: String = "text/plain") {
        self.attributes = attributes
        self.contentType = contentType
    }

    /// The value stored in the item, if it has one.
    package init?(item attributes: [String: AttributeValue]) {
        guard case .data(let bytes)? = attributes[Self.attributeName],
              let decoded = try? Self(wireBytes: Array(bytes)) else { return nil }
        self = decoded
    }

    /// The value as stored in the item.
    package var attributeValue: AttributeValue { .data(Data(wireBytes)) }

    /// Throws `.invalidParameter` for a set beyond the limits or a name that is empty.
    package func validate() throws(StoreError) {
        guard attributes.count <= Self.maximumCount else {
            throw StoreError(.invalidParameter, "more than \(Self.maximumCount) lookup attributes")
        }
        for (name, value) in attributes {
            guard !name.isEmpty, name.utf8.count <= Self.maximumLength, value.utf8.count <= Self.maximumLength else {
                throw StoreError(.invalidParameter, "a lookup attribute's name is empty or a name or value is longer than \(Self.maximumLength) bytes")
            }
        }
        guard contentType.utf8.count <= 255 else { throw StoreError(.invalidParameter, "the content type is longer than 255 bytes") }
    }

    package func write(to writer: inout ByteWriter) {
        writer.u8(1)
        contentType.write(to: &writer)
        attributes.sorted { $0.key < $1.key }.map { [$0.key, $0.value] }.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        guard try reader.u8() == 1 else { throw CodecError(.malformed, "unknown lookup-attribute version") }
        contentType = try String(from: &reader)
        var attributes: [String: String] = [:]
        for pair in try [[String]](from: &reader) {
            guard pair.count == 2 else { throw CodecError(.malformed, "a lookup attribute is not a pair") }
            attributes[pair[0]] = pair[1]
        }
        self.attributes = attributes
    }
}
