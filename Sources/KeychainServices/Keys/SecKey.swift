import Foundation
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// An asymmetric key: generated, imported from data, or from the keychain.
///
/// Immutable. A key held here carries its material (in swift-crypto's objects). A private key
/// found in a keychain the agent holds carries only its public key and a reference: signing,
/// decryption and key exchange run inside the agent, so the private key never enters this
/// process. A Secure Enclave key's private key is inside the TPM: this process holds its public
/// key and the TPM's blob (of no use to any other TPM), and the agent uses it. Its description names the key's kind and never its material. Two keys are equal
/// when they are the same key (the same class and public key), as `CFEqual` decides.
public final class SecKey: Hashable, Sendable, CustomStringConvertible {
    /// Where the key's material is.
    enum Backing: Sendable {
        case local(AsymmetricKey)
        /// A private key inside the agent: its public key, and how to reach it.
        case agent(publicKey: AsymmetricKey, reference: PersistentReference, keychain: AgentKeychain)
        /// A Secure Enclave key in no keychain: its public key and its TPM blob, used through the agent.
        case enclave(publicKey: AsymmetricKey, key: EnclaveKeyData, agent: AgentKeychain)
    }

    let backing: Backing
    /// `kSecAttrIsExtractable`: false means its external representation is never given out.
    let isExtractable: Bool
    /// The keychain attributes of a key that came from the keychain (label, tag, access group...),
    /// which `SecKeyCopyAttributes` reports over the key's own.
    let storedAttributes: [String: AttributeValue]

    init(_ key: AsymmetricKey, isExtractable: Bool = true, storedAttributes: [String: AttributeValue] = [:]) {
        self.backing = .local(key)
        self.isExtractable = isExtractable
        self.storedAttributes = storedAttributes
    }

    init(agentKey publicKey: AsymmetricKey, reference: PersistentReference, keychain: AgentKeychain, isExtractable: Bool,
         storedAttributes: [String: AttributeValue]) {
        self.backing = .agent(publicKey: publicKey, reference: reference, keychain: keychain)
        self.isExtractable = isExtractable
        self.storedAttributes = storedAttributes
    }

    /// A Secure Enclave key that is in no keychain (`kSecAttrIsPermanent` false).
    init(enclaveKey key: EnclaveKeyData, agent: AgentKeychain) throws(StoreError) {
        self.backing = .enclave(publicKey: try key.publicP256Key(), key: key, agent: agent)
        self.isExtractable = false
        self.storedAttributes = .named([.tokenID: .string(EnclaveKeyData.tokenID)])
    }

    /// The key's material when this process holds it.
    var localKey: AsymmetricKey? {
        if case .local(let key) = backing { return key }
        return nil
    }

    var isPrivate: Bool {
        switch backing {
        case .local(let key): return key.isPrivate
        case .agent, .enclave: return true
        }
    }

    var kind: KeyKind { publicKey.kind }

    /// The public key (a public key's own).
    var publicKey: AsymmetricKey {
        switch backing {
        case .local(let key): return key.publicKey
        case .agent(let publicKey, _, _), .enclave(let publicKey, _, _): return publicKey
        }
    }

    /// `kSecAttrApplicationLabel`: SHA-1 of the public key bytes.
    var applicationLabel: Data { publicKey.applicationLabel }

    public static func == (lhs: SecKey, rhs: SecKey) -> Bool {
        lhs === rhs || (lhs.isPrivate == rhs.isPrivate && lhs.kind == rhs.kind && lhs.publicKey.publicBytes == rhs.publicKey.publicBytes)
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isPrivate)
        hasher.combine(publicKey.publicBytes)
    }

    public var description: String {
        let kind: String
        switch self.kind {
        case .ec(let curve): kind = "EC\(isPrivate ? "Private" : "Public")Key, curve: P-\(curve.bits)"
        case .rsa(let bits): kind = "RSA\(isPrivate ? "Private" : "Public")Key, bits: \(bits)"
        }
        return "<SecKeyRef key type: \(kind), block size: \(self.kind.bits) bits, addr: \(ObjectIdentifier(self))>"
    }
}

public typealias SecKeyRef = SecKey
