import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `import`: security(1)'s. Reads what `SecItemImport` reads (PKCS#12 files, certificates, keys,
/// PEM sequences, encrypted keys) and adds it to a keychain; a failed import adds nothing.
package struct ImportItems: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import certificates, keys and identities into a keychain.",
        discussion: "Formats (-f): pkcs12 (.p12, .pfx), x509 (one DER certificate), openssl (SEC1, PKCS#1 or SubjectPublicKeyInfo keys), "
            + "bsafe (PKCS#8 or PKCS#1 keys), pkcs8 (encrypted PKCS#8), pemseq (PEM certificates and keys, encrypted ones included). "
            + "Without -f the format follows from the file's contents. A passphrase is asked for when the file needs one.").underKeyhaven
    @Argument(help: "The file to import.") package var file: String
    @Option(name: .customShort("k"), help: "The keychain to import into (default: the default keychain).") package var keychain: String?
    @Option(name: .customShort("t"), help: "What the file holds: cert, pub, priv or agg (accepted for security(1)'s scripts; the contents decide).") package var type: String?
    @Option(name: .customShort("f"), help: "The format: pkcs12, x509, openssl, bsafe, pkcs8 or pemseq.") package var format: String?
    @Flag(name: .customShort("w"), help: "The private keys are wrapped (encrypted).") package var wrapped = false
    @Option(name: .customShort("P"), help: "The passphrase (- reads it from standard input; without it, asked for when needed).")
    package var passphrase: String?
    @Flag(name: .customShort("x"), help: "Make imported private keys non-extractable.") package var nonExtractable = false
    @OptionGroup package var access: AccessOptions
    @Option(name: [.customShort("G"), .customLong("access-group")], help: "The access group to import into (a Linux addition).")
    package var accessGroup: String?

    package func validate() throws {
        if let type, !["cert", "pub", "priv", "session", "agg"].contains(type) {
            throw ValidationError("unknown type \(type): cert, pub, priv or agg")
        }
        if let format, !PKIFormatNames.isValid(format, wrapped: wrapped) {
            throw ValidationError("unknown format \(format): pkcs12, x509, openssl, bsafe, pkcs8 or pemseq")
        }
    }

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}

/// security(1)'s format names for `-f`, and which of them may be wrapped (`-w`).
enum PKIFormatNames {
    static func isValid(_ name: String, wrapped: Bool) -> Bool {
        wrapped ? ["openssl", "pkcs8"].contains(name) : ["pkcs12", "x509", "pemseq", "pkcs8", "openssl", "bsafe"].contains(name)
    }
}
