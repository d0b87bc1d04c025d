/// The item classes the engine stores. Raw values are Apple's wire names and SQL table names.
package enum ItemClass: String, Sendable, Hashable, CaseIterable {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case key = "keys"
    case certificate = "cert"

    /// The attribute schema of this class, in Apple's column order.
    package var schema: ItemSchema {
        switch self {
        case .genericPassword: return .genericPassword
        case .internetPassword: return .internetPassword
        case .key: return .key
        case .certificate: return .certificate
        }
    }

    /// A generic or an internet password: an item whose secret is all a program reads of it.
    package var isPassword: Bool { self == .genericPassword || self == .internetPassword }

    /// The raw value's four ASCII bytes.
    package var asciiName: [UInt8] {
        switch self {
        case .genericPassword: return [0x67, 0x65, 0x6E, 0x70]
        case .internetPassword: return [0x69, 0x6E, 0x65, 0x74]
        case .key: return [0x6B, 0x65, 0x79, 0x73]
        case .certificate: return [0x63, 0x65, 0x72, 0x74]
        }
    }

    /// The class whose raw value these UTF-8 bytes are, or nil: as `init(rawValue:)` on their
    /// text, without making the text (the agent protocol and persistent references carry the
    /// name as bytes).
    package init?(utf8 bytes: ArraySlice<UInt8>) {
        guard bytes.count == 4 else { return nil }
        let i = bytes.startIndex
        switch (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]) {
        case (0x67, 0x65, 0x6E, 0x70): self = .genericPassword  // genp
        case (0x69, 0x6E, 0x65, 0x74): self = .internetPassword  // inet
        case (0x6B, 0x65, 0x79, 0x73): self = .key  // keys
        case (0x63, 0x65, 0x72, 0x74): self = .certificate  // cert
        default: return nil
        }
    }
}
