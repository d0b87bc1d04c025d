import Foundation
import KeychainKeys
import KeychainStore

/// What a certificate item stores as attributes (``ItemAttributes/certificate(_:)``), and the
/// `SecCertificate` a stored one is.
enum CertificateItemAttributes {
    static func of(_ info: CertificateInfo) -> [String: AttributeValue] { ItemAttributes.certificate(info) }

    /// The `SecCertificate` a stored certificate item is (nil when its data is not a certificate).
    static func certificate(from item: StoredItem) -> SecCertificate? {
        guard item.itemClass == .certificate, let der = item.secret, let info = CertificateInfo(der: Array(der)) else { return nil }
        return SecCertificate(info, storedAttributes: item.attributes)
    }
}
