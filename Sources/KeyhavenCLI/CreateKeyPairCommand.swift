import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `create-keypair` (a Linux addition; macOS's security(1) has none): a new private key stored in
/// the keychain, as `SecKeyCreateRandomKey` with `kSecAttrIsPermanent` makes it; prints the public
/// key as PEM.
package struct CreateKeyPair: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "create-keypair", abstract: "Create a private key in a keychain and print its public key (PEM).",
        discussion: "A Linux addition. The key is what SecKeyCreateRandomKey with kSecAttrIsPermanent stores: "
            + "find it with kSecClassKey and its tag or label.").underKeyhaven
    @Option(name: .customShort("a"), help: "The algorithm: ec (P-256, P-384, P-521) or rsa.") package var algorithm: String = "ec"
    @Option(name: .customShort("s"), help: "The size in bits (default 256 for ec, 2048 for rsa).") package var size: Int?
    @Option(name: .customShort("l"), help: "The key's label (kSecAttrLabel).") package var label: String?
    @Option(name: .customShort("t"), help: "The key's application tag (kSecAttrApplicationTag).") package var tag: String?
    @Flag(name: .customShort("x"), help: "Make the private key non-extractable.") package var nonExtractable = false
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") package var keychain: String?

    package func validate() throws {
        guard algorithm == "ec" || algorithm == "rsa" else { throw ValidationError("-a is ec or rsa") }
    }

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}
