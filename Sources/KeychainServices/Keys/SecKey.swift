import Foundation
import KeychainKeys
import KeychainStore

/// An asymmetric key: generated, imported from data, or from the keychain.
///
/// Immutable. Its description names the key's kind and never its material. Two keys are equal
/// when they are the same key (the same class and the same public key), as `CFEqual` decides.
public final class SecKey: Hashable, Sendable, CustomStringConvertible {
    let key: AsymmetricKey
    /// `kSecAttrIsExtractable`: false means its external representation is never given out.
    let isExtractable: Bool
    /// The keychain attributes of a key that came from the keychain (label, tag, access group...),
    /// which `SecKeyCopyAttributes` reports over the key's own.
    let storedAttributes: [String: AttributeValue]

    init(_ key: AsymmetricKey, isExtractable: Bool = true, storedAttributes: [String: AttributeValue] = [:]) {
        self.key = key
        self.isExtractable = isExtractable
        self.storedAttributes = storedAttributes
    }

    public static func == (lhs: SecKey, rhs: SecKey) -> Bool { lhs === rhs || lhs.key.isSameKey(as: rhs.key) }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key.isPrivate)
        hasher.combine(key.publicBytes)
    }

    public var description: String {
        let kind: String
        switch key.kind {
        case .ec(let curve): kind = "EC\(key.isPrivate ? "Private" : "Public")Key, curve: P-\(curve.bits)"
        case .rsa(let bits): kind = "RSA\(key.isPrivate ? "Private" : "Public")Key, bits: \(bits)"
        }
        return "<SecKeyRef key type: \(kind), block size: \(key.kind.bits) bits, addr: \(ObjectIdentifier(self))>"
    }
}

public typealias SecKeyRef = SecKey
