import FoundationEssentials

/// The plaintext of an item's metadata blob: all its attributes and what binds the secret to them.
///
/// Layout (before padding, see ``Padding``): `u8 version (1)`, `u8 flags` (bit 0: the item has a
/// secret; bit 1: an access control follows; bit 2: an access object follows; bit 3: the access
/// object's enrolled-biometry digest follows), `16 bytes secretTag`, `[u64 access-control flags]`,
/// `[access object]` (``ItemAccess``'s wire form), `[u32-length-prefixed biometry digest]`, then
/// the attributes in ``AttributeCodec`` form.
package struct ItemMetadata: Sendable, Equatable {
    package var attributes: [String: AttributeValue]
    /// Random per write; the secret blob's associated data includes it, so a secret from another
    /// write of the same row (or another row) never opens with this metadata.
    package var secretTag: Data
    package var hasSecret: Bool
    /// `SecAccessControlCreateFlags` of the item's access control, if it was given one.
    package var accessControlFlags: UInt64?
    /// The item's access object (trusted applications), if it has one.
    package var access: ItemAccess?

    static let version: UInt8 = 1

    package func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.u8(Self.version)
        let biometrySet = access?.biometrySet
        writer.u8((hasSecret ? 1 : 0) | (accessControlFlags != nil ? 2 : 0) | (access != nil ? 4 : 0) | (biometrySet != nil ? 8 : 0))
        writer.raw(secretTag)
        if let accessControlFlags { writer.u64(accessControlFlags) }
        if let access { access.write(to: &writer) }
        if let biometrySet { biometrySet.write(to: &writer) }
        AttributeCodec.encode(attributes, into: &writer)
        return writer.bytes
    }

    package init(attributes: [String: AttributeValue], secretTag: Data, hasSecret: Bool, accessControlFlags: UInt64?,
                 access: ItemAccess? = nil) {
        self.attributes = attributes
        self.secretTag = secretTag
        self.hasSecret = hasSecret
        self.accessControlFlags = accessControlFlags
        self.access = access
    }

    package init(decoding bytes: [UInt8]) throws(CodecError) {
        var reader = ByteReader(bytes)
        guard try reader.u8() == Self.version else { throw CodecError(.malformed, "unknown item metadata version") }
        let flags = try reader.u8()
        guard flags & ~15 == 0, flags & 8 == 0 || flags & 4 != 0 else { throw CodecError(.malformed, "unknown item metadata flags") }
        secretTag = try reader.takeData(16)
        hasSecret = flags & 1 != 0
        accessControlFlags = flags & 2 != 0 ? try reader.u64() : nil
        access = flags & 4 != 0 ? try ItemAccess(from: &reader) : nil
        if flags & 8 != 0 { access?.biometrySet = try Data(from: &reader) }
        attributes = try AttributeCodec.decode(from: &reader)
        guard reader.remaining == 0 else { throw CodecError(.malformed, "item metadata has trailing bytes") }
    }
}
