import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// `create-keypair` (a Linux addition; macOS's security(1) has none): a new private key stored in
/// the keychain, as `SecKeyCreateRandomKey` with `kSecAttrIsPermanent` makes it; prints the public
/// key as PEM.
struct CreateKeyPair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-keypair", abstract: "Create a private key in a keychain and print its public key (PEM).",
        discussion: "A Linux addition. The key is what SecKeyCreateRandomKey with kSecAttrIsPermanent stores: "
            + "find it with kSecClassKey and its tag or label.").underKeyhaven
    @Option(name: .customShort("a"), help: "The algorithm: ec (P-256, P-384, P-521) or rsa.") var algorithm: String = "ec"
    @Option(name: .customShort("s"), help: "The size in bits (default 256 for ec, 2048 for rsa).") var size: Int?
    @Option(name: .customShort("l"), help: "The key's label (kSecAttrLabel).") var label: String?
    @Option(name: .customShort("t"), help: "The key's application tag (kSecAttrApplicationTag).") var tag: String?
    @Flag(name: .customShort("x"), help: "Make the private key non-extractable.") var nonExtractable = false
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") var keychain: String?

    func validate() throws {
        guard algorithm == "ec" || algorithm == "rsa" else { throw ValidationError("-a is ec or rsa") }
    }

    func run() throws {
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
            if let label { attributes["labl"] = .string(label) }
            if let tag { attributes["atag"] = .string(tag) }
            var material = key.withExternalRepresentation { $0 }
            defer { zeroize(&material) }
            try session.send(.add(keychain: try session.path(keychain), item: NewItem(itemClass: .key, attributes: attributes,
                                                                                      secret: Data(material)), caller: session.caller))
            print(key.publicPEM, terminator: "")
        }
    }
}
