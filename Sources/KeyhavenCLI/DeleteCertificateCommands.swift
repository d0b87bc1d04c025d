import ArgumentParser
import FoundationEssentials
import KeychainModel

/// The options naming one certificate: by common name or by SHA-1 hash, as security(1).
package struct CertificateSelection: ParsableArguments {
    package init() {}

    @Option(name: .customShort("c"), help: "The certificate's common name (it must name one certificate).") package var name: String?
    @Option(name: .customShort("Z"), help: "The certificate's SHA-1 hash (40 hex digits).") package var hash: String?
    @Flag(name: .customShort("t"), help: "Also delete trust settings (Keyhaven keeps none; accepted for security(1)'s scripts).")
    package var trustSettings = false
    @Argument(help: "The keychains (default: the search list).") package var keychains: [String] = []

    package func validate() throws {
        guard (name == nil) != (hash == nil) else { throw ValidationError("give -c NAME or -Z HASH") }
    }
}

/// `delete-certificate`.
package struct DeleteCertificate: HelperCommand {
    package static let configuration = CommandConfiguration(commandName: "delete-certificate", abstract: "Delete a certificate.").underKeyhaven
    @OptionGroup package var selection: CertificateSelection

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}

/// `delete-identity`: the certificate and its private key (kept when another certificate uses it).
package struct DeleteIdentity: HelperCommand {
    package static let configuration = CommandConfiguration(commandName: "delete-identity",
                                                    abstract: "Delete an identity: its certificate and its private key.").underKeyhaven
    @OptionGroup package var selection: CertificateSelection

    package init() {}

    package func run() throws { try HelperDispatch.run(self) }
}
