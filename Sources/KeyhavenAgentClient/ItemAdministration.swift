import FoundationEssentials
import KeychainModel

/// What Keychain Access does to one item with the keychain's password in place of the item's
/// access object (``AgentRequest/administer(keychain:reference:password:action:)``).
package enum ItemAdministration: Sendable {
    /// Answer the item with its secret ("Show Password", "Copy Password", an identity's export).
    case reveal
    /// Change its attributes (label, account, comment); never its access group or secret.
    case update(attributes: [String: AttributeValue])
    /// Delete it, as `keyhaven delete-generic-password` does.
    case delete
}

extension ItemAdministration: WireCodable {
    package func write(to writer: inout ByteWriter) {
        switch self {
        case .reveal: writer.u8(0)
        case .update(let attributes): writer.u8(1); attributes.write(to: &writer)
        case .delete: writer.u8(2)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.u8() {
        case 0: self = .reveal
        case 1: self = .update(attributes: try [String: AttributeValue](from: &reader))
        case 2: self = .delete
        default: throw CodecError(.malformed, "an unknown item administration")
        }
    }
}
