import Foundation
import KeychainKeys
import KeychainStore

/// An X.509 certificate (DER), parsed with OpenSSL (`CertificateInfo`).
///
/// Immutable. Two certificates are equal when their DER is.
public final class SecCertificate: Hashable, Sendable, CustomStringConvertible {
    let info: CertificateInfo
    /// The keychain attributes of a certificate that came from the keychain.
    let storedAttributes: [String: AttributeValue]

    init(_ info: CertificateInfo, storedAttributes: [String: AttributeValue] = [:]) {
        self.info = info
        self.storedAttributes = storedAttributes
    }

    public static func == (lhs: SecCertificate, rhs: SecCertificate) -> Bool { lhs === rhs || lhs.info.der == rhs.info.der }
    public func hash(into hasher: inout Hasher) { hasher.combine(info.der) }

    public var description: String { "<cert(\(ObjectIdentifier(self)))> s: \(info.subjectSummary ?? "") i: \(info.issuerSummary ?? "")" }
}

public typealias SecCertificateRef = SecCertificate

/// A certificate from its DER; nil for anything else (PEM, garbage, trailing bytes): never a crash.
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    CertificateInfo(der: [UInt8](data as Data)).map { SecCertificate($0) }
}

/// The certificate's DER.
@discardableResult
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(bytes: certificate.info.der, length: certificate.info.der.count)
}

/// A human-readable summary of the subject: its common name, else an e-mail address, a DNS name,
/// an organizational unit or an organization.
@discardableResult
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    certificate.info.subjectSummary.map { NSString(string: $0) }
}

/// The subject's common name (the last, most specific one); errSecInternal when it has none.
@discardableResult
public func SecCertificateCopyCommonName(_ certificate: SecCertificate, _ commonName: UnsafeMutablePointer<CFString?>) -> OSStatus {
    guard let name = certificate.info.commonNames.last else { return errSecInternal }
    commonName.pointee = NSString(string: name)
    return errSecSuccess
}

/// The e-mail addresses in the subject and in its alternative names (an empty array when none).
@discardableResult
public func SecCertificateCopyEmailAddresses(_ certificate: SecCertificate, _ emailAddresses: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    emailAddresses.pointee = NSArray(array: certificate.info.emailAddresses)
    return errSecSuccess
}

/// The certificate's public key; nil for a key type Keyhaven does not support (EC on P-256/384/521
/// and RSA are).
@discardableResult
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    certificate.info.publicKey.map { SecKey($0) }
}

/// The serial number's bytes (big-endian, as encoded).
@discardableResult
public func SecCertificateCopySerialNumberData(_ certificate: SecCertificate, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    let serial = certificate.info.serialNumber
    return NSData(bytes: serial, length: serial.count)
}

/// The issuer, normalized as Apple does for matching (strings upper-cased, white space
/// collapsed), as a DER sequence.
@discardableResult
public func SecCertificateCopyNormalizedIssuerSequence(_ certificate: SecCertificate) -> CFData? {
    let bytes = certificate.info.normalizedIssuer
    return NSData(bytes: bytes, length: bytes.count)
}

/// The subject, normalized as Apple does for matching, as a DER sequence.
@discardableResult
public func SecCertificateCopyNormalizedSubjectSequence(_ certificate: SecCertificate) -> CFData? {
    let bytes = certificate.info.normalizedSubject
    return NSData(bytes: bytes, length: bytes.count)
}
