import Foundation
import KeychainKeys

/// The `certificates` target: bytes as a DER certificate (every accessor Apple's functions use),
/// as PEM text, and as a PKCS#12 file with and without a passphrase. Every path returns.
enum CertificateFuzzer {
    static func run(_ bytes: [UInt8]) {
        if let info = CertificateInfo(der: bytes) {
            _ = info.serialNumber
            _ = info.publicKey
            _ = info.publicKeyHash
            _ = info.subjectKeyIdentifier
            _ = info.commonNames
            _ = info.emailAddresses
            _ = info.subjectSummary
            _ = info.issuerSummary
            _ = info.normalizedIssuerContent
            _ = info.normalizedSubjectContent
        }
        // PEM: the base64 body of a CERTIFICATE block, decoded and parsed.
        let text = String(decoding: bytes, as: UTF8.self)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        if let der = Data(base64Encoded: body) { _ = CertificateInfo(der: Array(der)) }
        _ = try? PKCS12.read(bytes, passphrase: "")
        _ = try? PKCS12.read(bytes, passphrase: "fuzz")
    }
}
