import Crypto
import FoundationEssentials
import X509

/// What Keychain Access shows of a certificate: its names, serial, validity and uses.
extension CertificateInfo {
    /// The subject's distinguished name, as RFC 4514 writes it (`CN=...,O=...`).
    package var subjectName: String { certificate.subject.description }
    package var issuerName: String { certificate.issuer.description }
    package var notValidBefore: Date { certificate.notValidBefore }
    package var notValidAfter: Date { certificate.notValidAfter }

    /// The key usage extension's uses, in RFC 5280's words and order; empty without the extension.
    package var keyUsageNames: [String] {
        guard let usage = try? certificate.extensions.keyUsage else { return [] }
        let uses: [(Bool, String)] = [
            (usage.digitalSignature, "Digital Signature"), (usage.nonRepudiation, "Non-Repudiation"),
            (usage.keyEncipherment, "Key Encipherment"), (usage.dataEncipherment, "Data Encipherment"),
            (usage.keyAgreement, "Key Agreement"), (usage.keyCertSign, "Certificate Signing"), (usage.cRLSign, "CRL Signing"),
            (usage.encipherOnly, "Encipher Only"), (usage.decipherOnly, "Decipher Only"),
        ]
        return uses.filter(\.0).map(\.1)
    }

    /// The extended key usage extension's purposes (server and client authentication, ...).
    package var extendedKeyUsageNames: [String] {
        guard let usages = try? certificate.extensions.extendedKeyUsage else { return [] }
        return usages.map { usage in
            switch usage {
            case .serverAuth: return "Server Authentication"
            case .clientAuth: return "Client Authentication"
            case .codeSigning: return "Code Signing"
            case .emailProtection: return "E-mail Protection"
            case .timeStamping: return "Time Stamping"
            case .ocspSigning: return "OCSP Signing"
            case .any: return "Any"
            default: return usage.description
            }
        }
    }

    /// The certificate's DER's SHA-256 and SHA-1 fingerprints, as pairs of hex digits.
    package var sha256Fingerprint: String { Self.fingerprint(SHA256.hash(data: der)) }
    package var sha1Fingerprint: String { Self.fingerprint(Insecure.SHA1.hash(data: der)) }

    static func fingerprint<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}
