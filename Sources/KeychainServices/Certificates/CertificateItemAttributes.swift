import Foundation
import KeychainKeys
import KeychainStore

/// What a certificate item stores as attributes, read from the certificate as Apple's client
/// does (spec 1.5): type and encoding, the normalized subject and issuer, serial number, subject
/// key identifier, the public key's hash, and the subject summary as the label.
enum CertificateItemAttributes {
    /// `kSecAttrCertificateType`: CSSM_CERT_X_509v3; `kSecAttrCertificateEncoding`: CSSM_CERT_ENCODING_DER.
    static let x509v3: Int64 = 3
    static let der: Int64 = 3

    static func of(_ info: CertificateInfo) -> [String: AttributeValue] {
        var attributes: [String: AttributeValue] = [
            "ctyp": .number(x509v3), "cenc": .number(der),
            "subj": .data(Data(info.normalizedSubjectContent)), "issr": .data(Data(info.normalizedIssuerContent)),
            "slnr": .data(Data(info.serialNumber)), "pkhh": .data(info.publicKeyHash),
        ]
        if let skid = info.subjectKeyIdentifier { attributes["skid"] = .data(Data(skid)) }
        if let summary = info.subjectSummary { attributes["labl"] = .string(summary) }
        return attributes
    }

    /// The `SecCertificate` a stored certificate item is (nil when its data is not a certificate).
    static func certificate(from item: StoredItem) -> SecCertificate? {
        guard item.itemClass == .certificate, let der = item.secret, let info = CertificateInfo(der: Array(der)) else { return nil }
        return SecCertificate(info, storedAttributes: item.attributes)
    }
}
