import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `find-certificate`: security(1)'s, over the certificate items.
package struct FindCertificate: HelperCommand {
    package static let configuration = CommandConfiguration(commandName: "find-certificate",
                                                    abstract: "Find a certificate (the first, or all with -a).").underKeyhaven
    @Flag(name: .customShort("a"), help: "Find all matching certificates, not just the first.") package var all = false
    @Option(name: .customShort("c"), help: "Match on this text in the subject's common name.") package var name: String?
    @Option(name: .customShort("e"), help: "Match on this e-mail address.") package var email: String?
    @Flag(name: .customShort("m"), help: "Show the certificates' e-mail addresses.") package var showEmails = false
    @Flag(name: .customShort("p"), help: "Print the certificates in PEM format.") package var pem = false
    @Flag(name: .customShort("Z"), help: "Print each certificate's SHA-256 and SHA-1 hashes.") package var hashes = false
    @Argument(help: "The keychains (default: the search list).") package var keychains: [String] = []

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}

/// `find-identity`: the certificates whose private key is in the keychain, numbered, with their
/// SHA-1 hashes, as security(1) lists them.
package struct FindIdentity: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "find-identity", abstract: "List identities: certificates whose private key is in the keychain.",
        discussion: "Keyhaven evaluates no trust chains: -v lists the identities within their validity dates.").underKeyhaven
    @Flag(name: .customShort("v"), help: "Only identities within their certificate's validity dates.") package var validOnly = false
    @Option(name: .customShort("p"), help: "A policy name, shown as security(1) shows it (basic, ssl-client, smime, ...).")
    package var policy: String = "basic"
    @Option(name: .customShort("s"), help: "Only identities whose common name contains this text.") package var name: String?
    @Argument(help: "The keychains (default: the search list).") package var keychains: [String] = []

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}
