import Crypto
import FoundationEssentials
import SwiftASN1
import X509
import _CryptoExtras

/// A parsed X.509 certificate (swift-certificates) and what Apple's SecCertificate functions and
/// certificate items read from it.
package struct CertificateInfo: Sendable {
    /// The certificate's DER, as given.
    package let der: [UInt8]
    let certificate: Certificate

    /// Parses DER; nil for anything that is not one certificate (trailing bytes included).
    package init?(der: [UInt8]) {
        guard !der.isEmpty, der.count <= 1 << 20, let certificate = try? Certificate(derEncoded: der) else { return nil }
        self.der = der
        self.certificate = certificate
    }

    /// Whether `date` is within the certificate's validity period.
    package func isWithinValidity(_ date: Date) -> Bool {
        certificate.notValidBefore <= date && date <= certificate.notValidAfter
    }

    /// The serial number's bytes (the INTEGER's content), as `SecCertificateCopySerialNumberData`.
    package var serialNumber: [UInt8] { Array(certificate.serialNumber.bytes) }

    /// The start of the validity period.
    package var notBefore: Date { certificate.notValidBefore }

    /// The certificate's public key, when it is one Keyhaven's keys can be (EC P-256/384/521, RSA).
    package var publicKey: AsymmetricKey? {
        let key = certificate.publicKey
        if let ec = P256.Signing.PublicKey(key) { return .ecPublic(.p256(ec)) }
        if let ec = P384.Signing.PublicKey(key) { return .ecPublic(.p384(ec)) }
        if let ec = P521.Signing.PublicKey(key) { return .ecPublic(.p521(ec)) }
        if let rsa = _RSA.Signing.PublicKey(key) { return .rsaPublic(rsa) }
        return nil
    }

    /// `kSecAttrPublicKeyHash`: SHA-1 of the public key's bytes (the subjectPublicKey BIT STRING's
    /// content), the same as the matching key's `kSecAttrApplicationLabel`.
    package var publicKeyHash: Data {
        if let key = publicKey { return key.applicationLabel }
        return Data(Insecure.SHA1.hash(data: Self.subjectPublicKeyBits(certificate.publicKey.subjectPublicKeyInfoBytes)))
    }

    /// The subject key identifier extension's value, if present.
    package var subjectKeyIdentifier: [UInt8]? {
        (try? certificate.extensions.subjectKeyIdentifier).flatMap { $0.map { Array($0.keyIdentifier) } }
    }

    /// Common names in the subject, in order (`SecCertificateCopyCommonName` takes the last).
    package var commonNames: [String] { Self.values(of: .RDNAttributeType.commonName, in: certificate.subject) }

    /// E-mail addresses: the subject's emailAddress attributes, then the subject alternative names'.
    package var emailAddresses: [String] {
        var emails = Self.values(of: .RDNAttributeType.emailAddress, in: certificate.subject)
        if let names = try? certificate.extensions.subjectAlternativeNames {
            for name in names { if case .rfc822Name(let email) = name { emails.append(email) } }
        }
        return emails
    }

    /// `SecCertificateCopySubjectSummary`: the last common name, else an e-mail address, else a
    /// DNS name, else the last organizational unit or organization.
    package var subjectSummary: String? {
        if let name = commonNames.last { return name }
        if let email = emailAddresses.first { return email }
        if let names = try? certificate.extensions.subjectAlternativeNames {
            for name in names { if case .dnsName(let host) = name { return host } }
        }
        return Self.values(of: .RDNAttributeType.organizationalUnitName, in: certificate.subject).last
            ?? Self.values(of: .RDNAttributeType.organizationName, in: certificate.subject).last
    }

    /// The issuer's common name (or organization), for descriptions.
    package var issuerSummary: String? {
        Self.values(of: .RDNAttributeType.commonName, in: certificate.issuer).last
            ?? Self.values(of: .RDNAttributeType.organizationName, in: certificate.issuer).last
    }

    /// The subject's DER (`kSecAttrSubject` before normalization).
    package var subjectDER: [UInt8] { Self.der(certificate.subject) }

    /// Apple's normalized issuer and subject sequences: string values upper-cased, trimmed, inner
    /// white space collapsed, re-encoded as UTF8String; other values as they are.
    package var normalizedIssuer: [UInt8] { Self.der(Self.normalized(certificate.issuer)) }
    package var normalizedSubject: [UInt8] { Self.der(Self.normalized(certificate.subject)) }

    /// The normalized names without their outer SEQUENCE header: what certificate items store as
    /// `kSecAttrSubject` and `kSecAttrIssuer` (Apple's "normalized content").
    package var normalizedIssuerContent: [UInt8] { Self.content(normalizedIssuer) }
    package var normalizedSubjectContent: [UInt8] { Self.content(normalizedSubject) }

    static func content(_ sequence: [UInt8]) -> [UInt8] {
        guard let node = try? DER.parse(sequence), case .constructed(let children) = node.content else { return sequence }
        return children.flatMap { Array($0.encodedBytes) }
    }

    static func values(of type: ASN1ObjectIdentifier, in name: DistinguishedName) -> [String] {
        name.flatMap { $0 }.filter { $0.type == type }.compactMap { String($0.value) }
    }

    static func normalized(_ name: DistinguishedName) -> DistinguishedName {
        DistinguishedName(name.map { rdn in
            RelativeDistinguishedName(rdn.map { attribute in
                guard let text = String(attribute.value) else { return attribute }
                let folded = text.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
                return RelativeDistinguishedName.Attribute(type: attribute.type, value: .init(utf8String: folded))
            })
        })
    }

    static func der(_ name: DistinguishedName) -> [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(name)
        return serializer.serializedBytes
    }

    /// The BIT STRING content of a SubjectPublicKeyInfo (for keys of other kinds).
    static func subjectPublicKeyBits(_ spki: ArraySlice<UInt8>) -> [UInt8] {
        guard let node = try? DER.parse(Array(spki)), case .constructed(let children) = node.content else { return Array(spki) }
        var iterator = children.makeIterator()
        _ = iterator.next()
        guard let bits = iterator.next(), let bitString = try? ASN1BitString(derEncoded: bits) else { return Array(spki) }
        return Array(bitString.bytes)
    }
}
