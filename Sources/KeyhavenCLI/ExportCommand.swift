import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `export`: security(1)'s, over what `SecItemExport` writes: certificates, keys and identities
/// as X.509, OpenSSL, BSAFE, encrypted PKCS#8, PEM sequences or PKCS#12. Keys stored as not
/// extractable are never exported.
package struct ExportItems: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export certificates, keys or identities from a keychain.",
        discussion: "Types (-t): certs, allKeys, pubKeys, privKeys, identities, all (default). Formats (-f): openssl, bsafe, pkcs8 "
            + "(encrypted PKCS#8), pkcs12, x509, pemseq; default: x509 for one certificate, openssl for one key, else pemseq. "
            + "-w wraps private keys (openssl: traditional encrypted PEM). pkcs12, pkcs8 and -w need a passphrase (-P, else asked for); "
            + "a pemseq with -P holds encrypted private keys. The file is written 0600 and never over an existing one.").underKeyhaven
    @Option(name: .customShort("k"), help: "The keychain (default: the default keychain).") package var keychain: String?
    @Option(name: .customShort("t"), help: "What to export: certs, allKeys, pubKeys, privKeys, identities or all.") package var type = "all"
    @Option(name: .customShort("f"), help: "The format: openssl, bsafe, pkcs8, pkcs12, x509 or pemseq.") package var format: String?
    @Flag(name: .customShort("w"), help: "Wrap (encrypt) private keys.") package var wrapped = false
    @Flag(name: .customShort("p"), help: "PEM-encode the output.") package var pem = false
    @Option(name: .customShort("P"), help: "The passphrase (- reads it from standard input; without it, asked for when needed).")
    package var passphrase: String?
    @Option(name: .customShort("o"), help: "The file to write (it must not exist; default: standard output).") package var output: String?

    package func validate() throws {
        guard ["certs", "allKeys", "pubKeys", "privKeys", "identities", "all"].contains(type) else {
            throw ValidationError("unknown type \(type): certs, allKeys, pubKeys, privKeys, identities or all")
        }
        if let format, !PKIFormatNames.isValid(format, wrapped: wrapped) {
            throw ValidationError(wrapped ? "-w goes with -f openssl or pkcs8" : "unknown format \(format): openssl, bsafe, pkcs8, pkcs12, x509 or pemseq")
        }
        if wrapped, format == nil { throw ValidationError("-w goes with -f openssl or pkcs8") }
    }

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}
