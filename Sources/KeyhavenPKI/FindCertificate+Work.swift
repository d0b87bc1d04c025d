import ArgumentParser
import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

/// `find-certificate`'s work: the certificate items, matched and printed as security(1) prints them.
extension FindCertificate: HelperWork {
    package func work() throws {
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

/// `find-identity`'s work: the certificates whose private key is in the keychain, numbered, with
/// their SHA-1 hashes.
extension FindIdentity: HelperWork {
    package func work() throws {
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
