import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

/// `create-keypair`'s work: a new private key stored as `SecKeyCreateRandomKey` with
/// `kSecAttrIsPermanent` stores it; its public key printed as PEM.
extension CreateKeyPair: HelperWork {
    package func work() throws {
        try perform("SecKeyCreateRandomKey") { () throws(StoreError) in
            let kind: KeyKind
            if algorithm == "ec" {
                guard let curve = Curve(bits: size ?? 256) else { throw StoreError(.invalidParameter, "EC keys are 256, 384 or 521 bits") }
                kind = .ec(curve)
            } else {
                kind = .rsa(bits: size ?? 2048)
            }
            let key: AsymmetricKey
            do throws(KeyError) { key = try AsymmetricKey.generate(kind) } catch { throw StoreError(.invalidParameter, error.message) }
            let session = try Session.open()
            var attributes = ItemAttributes.key(key.publicKey, isPrivate: true, isExtractable: !nonExtractable)
            if let label { attributes[.label] = .string(label) }
            if let tag { attributes[.applicationTag] = .string(tag) }
            var material = key.withExternalRepresentation { $0 }
            defer { zeroize(&material) }
            try session.send(.add(keychain: try session.path(keychain), item: NewItem(itemClass: .key, attributes: attributes,
                                                                                      secret: Data(material)), caller: session.caller))
            print(key.publicPEM, terminator: "")
        }
    }
}
