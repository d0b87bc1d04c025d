import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel

/// `find-certificate`: security(1)'s, over the certificate items.
struct FindCertificate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find-certificate",
                                                    abstract: "Find a certificate (the first, or all with -a).").underKeyhaven
    @Flag(name: .customShort("a"), help: "Find all matching certificates, not just the first.") var all = false
    @Option(name: .customShort("c"), help: "Match on this text in the subject's common name.") var name: String?
    @Option(name: .customShort("e"), help: "Match on this e-mail address.") var email: String?
    @Flag(name: .customShort("m"), help: "Show the certificates' e-mail addresses.") var showEmails = false
    @Flag(name: .customShort("p"), help: "Print the certificates in PEM format.") var pem = false
    @Flag(name: .customShort("Z"), help: "Print each certificate's SHA-256 and SHA-1 hashes.") var hashes = false
    @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            let session = try Session.open()
            var found = try CertificateWork.certificates(keychains, session: session).filter {
                CertificateWork.matches($0, name: name, email: email)
            }
            guard !found.isEmpty else { throw StoreError(.itemNotFound, "no certificate matched") }
            if !all { found = [found[0]] }
            for certificate in found {
                if hashes {
                    printLine("SHA-256 hash: \(certificate.sha256)")
                    printLine("SHA-1 hash: \(certificate.sha1)")
                }
                if showEmails {
                    for address in certificate.info.emailAddresses { printLine("e-mail address: \(address)") }
                }
                if pem {
                    printLine(CertificateWork.pem(certificate.info.der))
                } else if !hashes && !showEmails {
                    ItemPrinter.printBlock(certificate.item, keychain: certificate.keychain, withSecret: false)
                }
            }
        }
    }
}

/// `find-identity`: the certificates whose private key is in the keychain, numbered, with their
/// SHA-1 hashes, as security(1) lists them.
struct FindIdentity: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find-identity", abstract: "List identities: certificates whose private key is in the keychain.",
        discussion: "Keyhaven evaluates no trust chains: -v lists the identities within their validity dates.").underKeyhaven
    @Flag(name: .customShort("v"), help: "Only identities within their certificate's validity dates.") var validOnly = false
    @Option(name: .customShort("p"), help: "A policy name, shown as security(1) shows it (basic, ssl-client, smime, ...).")
    var policy: String = "basic"
    @Option(name: .customShort("s"), help: "Only identities whose common name contains this text.") var name: String?
    @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecIdentitySearchCopyNext") { () throws(StoreError) in
            let session = try Session.open()
            let identities = try CertificateWork.identities(keychains, session: session).filter {
                CertificateWork.matches($0, name: name, email: nil)
            }
            printLine("Policy: \(policy == "basic" ? "X.509 Basic" : policy)")
            if !validOnly {
                printLine("  Matching identities")
                list(identities, suffix: "identities found")
            }
            printLine("  Valid identities only")
            list(identities.filter { $0.info.isWithinValidity(Date()) }, suffix: "valid identities found")
        }
    }

    private func list(_ identities: [CertificateWork.Found], suffix: String) {
        for (index, identity) in identities.enumerated() {
            printLine("  \(index + 1)) \(identity.sha1) \"\(identity.info.subjectSummary ?? "")\"")
        }
        printLine("     \(identities.count) \(suffix)")
    }
}
