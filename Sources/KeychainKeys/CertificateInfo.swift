import Crypto
import FoundationEssentials
import SwiftASN1
import _CryptoExtras

/// A parsed X.509 certificate and what Apple's SecCertificate functions and certificate items
/// read from it. OpenSSL parses it (`CertificateReader`); swift-asn1 reads its names.
package struct CertificateInfo: Sendable {
    /// The certificate's DER, as given.
    package let der: [UInt8]
    let fields: CertificateReader
    let subject: CertificateName
    let issuer: CertificateName

    /// Parses DER; nil for anything that is not one certificate (trailing bytes included).
    package init?(der: [UInt8]) {
        guard !der.isEmpty, der.count <= 1 << 20, let fields = CertificateReader(der: der) else { return nil }
        self.der = der
        self.fields = fields
        self.subject = CertificateName(der: fields.subject)
        self.issuer = CertificateName(der: fields.issuer)
    }

    /// Whether `date` is within the certificate's validity period.
    package func isWithinValidity(_ date: Date) -> Bool {
        fields.notBefore <= date && date <= fields.notAfter
    }

    /// The serial number's bytes (the INTEGER's content), as `SecCertificateCopySerialNumberData`.
    package var serialNumber: [UInt8] { fields.serialNumber }

    /// The start of the validity period.
    package var notBefore: Date { fields.notBefore }

    /// The certificate's public key, when it is one Keyhaven's keys can be (EC P-256/384/521, RSA
    /// of 2048 bits or more).
    package var publicKey: AsymmetricKey? {
        let spki = fields.subjectPublicKeyInfo
        if let ec = try? P256.Signing.PublicKey(derRepresentation: spki) { return .ecPublic(.p256(ec)) }
        if let ec = try? P384.Signing.PublicKey(derRepresentation: spki) { return .ecPublic(.p384(ec)) }
        if let ec = try? P521.Signing.PublicKey(derRepresentation: spki) { return .ecPublic(.p521(ec)) }
        if let rsa = try? _RSA.Signing.PublicKey(derRepresentation: spki) { return .rsaPublic(rsa) }
        return nil
    }

    /// `kSecAttrPublicKeyHash`: SHA-1 of the public key's bytes (the subjectPublicKey BIT STRING's
    /// content), the same as the matching key's `kSecAttrApplicationLabel`.
    package var publicKeyHash: Data {
        if let key = publicKey { return key.applicationLabel }
        return Data(Insecure.SHA1.hash(data: Self.subjectPublicKeyBits(fields.subjectPublicKeyInfo)))
    }

    /// The subject key identifier extension's value, if present.
    package var subjectKeyIdentifier: [UInt8]? { fields.subjectKeyIdentifier }

    /// Common names in the subject, in order (`SecCertificateCopyCommonName` takes the last).
    package var commonNames: [String] { subject.values(of: CertificateName.commonName) }

    /// E-mail addresses: the subject's emailAddress attributes, then the subject alternative names'.
    package var emailAddresses: [String] { subject.values(of: CertificateName.emailAddress) + fields.alternativeEmails }

    /// `SecCertificateCopySubjectSummary`: the last common name, else an e-mail address, else a
    /// DNS name, else the last organizational unit or organization.
    package var subjectSummary: String? {
        commonNames.last ?? emailAddresses.first ?? fields.alternativeHosts.first
            ?? subject.values(of: CertificateName.organizationalUnitName).last
            ?? subject.values(of: CertificateName.organizationName).last
    }

    /// The issuer's common name (or organization), for descriptions.
    package var issuerSummary: String? {
        issuer.values(of: CertificateName.commonName).last ?? issuer.values(of: CertificateName.organizationName).last
    }

    /// The subject's DER (`kSecAttrSubject` before normalization).
    package var subjectDER: [UInt8] { subject.der }

    /// Apple's normalized issuer and subject sequences: string values upper-cased, trimmed, inner
    /// white space collapsed, re-encoded as UTF8String; other values as they are.
    package var normalizedIssuer: [UInt8] { issuer.normalized }
    package var normalizedSubject: [UInt8] { subject.normalized }

    /// The normalized names without their outer SEQUENCE header: what certificate items store as
    /// `kSecAttrSubject` and `kSecAttrIssuer` (Apple's "normalized content").
    package var normalizedIssuerContent: [UInt8] { CertificateName.content(normalizedIssuer) }
    package var normalizedSubjectContent: [UInt8] { CertificateName.content(normalizedSubject) }

    /// The BIT STRING content of a SubjectPublicKeyInfo (for keys of other kinds).
    static func subjectPublicKeyBits(_ spki: [UInt8]) -> [UInt8] {
        guard let node = try? DER.parse(spki), case .constructed(let children) = node.content else { return spki }
        var iterator = children.makeIterator()
        _ = iterator.next()
        guard let bits = iterator.next(), let bitString = try? ASN1BitString(derEncoded: bits) else { return spki }
        return Array(bitString.bytes)
    }
}
