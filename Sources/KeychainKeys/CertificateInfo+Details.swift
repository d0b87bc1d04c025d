import Crypto
import FoundationEssentials

/// What Keychain Access shows of a certificate: its names, serial, validity and uses.
extension CertificateInfo {
    /// The subject's distinguished name, as RFC 4514 writes it (`CN=...,O=...`).
    package var subjectName: String { fields.subjectText }
    package var issuerName: String { fields.issuerText }
    package var notValidBefore: Date { fields.notBefore }
    package var notValidAfter: Date { fields.notAfter }

    /// The key usage extension's uses, in RFC 5280's words and order; empty without the extension.
    package var keyUsageNames: [String] { fields.keyUsageNames }

    /// The extended key usage extension's purposes (server and client authentication, ...); one
    /// without a name as its dotted OID.
    package var extendedKeyUsageNames: [String] { fields.extendedKeyUsageNames }

    /// The certificate's DER's SHA-256 and SHA-1 fingerprints, as pairs of hex digits.
    package var sha256Fingerprint: String { Self.fingerprint(SHA256.hash(data: der)) }
    package var sha1Fingerprint: String { Self.fingerprint(Insecure.SHA1.hash(data: der)) }

    static func fingerprint<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}
