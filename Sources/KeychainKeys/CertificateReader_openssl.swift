#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import FoundationEssentials

/// What OpenSSL's X.509 parser (`d2i_X509`) reads from one certificate, as plain values.
///
/// OpenSSL parses rather than swift-certificates: KeychainKeys sits under the `Security` module,
/// and swift-certificates imports `Security` when it can, so a package graph holding both would
/// need each module built before the other (docs/porting.md, section 5).
struct CertificateReader: Sendable {
    let serialNumber: [UInt8]
    let notBefore: Date
    let notAfter: Date
    let issuer: [UInt8]
    let subject: [UInt8]
    /// RFC 4514's text of the names (`CN=...,O=...`), as OpenSSL writes it.
    let issuerText: String
    let subjectText: String
    /// The SubjectPublicKeyInfo's DER.
    let subjectPublicKeyInfo: [UInt8]
    let subjectKeyIdentifier: [UInt8]?
    let keyUsageNames: [String]
    let extendedKeyUsageNames: [String]
    /// The subject alternative names' e-mail addresses and DNS names, in order.
    let alternativeEmails: [String]
    let alternativeHosts: [String]

    /// Reads `der`; nil unless it is exactly one certificate OpenSSL parses.
    init?(der: [UInt8]) {
        guard let certificate = OpenSSLKey.certificate(der) else { return nil }
        defer { X509_free(certificate) }
        guard let serial = X509_get0_serialNumber(certificate),
              let serialDER = try? OpenSSLKey.encoded(OpaquePointer(serial), { i2d_ASN1_INTEGER(UnsafeMutablePointer($0), $1) }),
              let notBefore = Self.date(X509_get0_notBefore(certificate)),
              let notAfter = Self.date(X509_get0_notAfter(certificate)),
              let issuer = X509_get_issuer_name(certificate), let subject = X509_get_subject_name(certificate),
              let issuerDER = try? OpenSSLKey.encoded(issuer, i2d_X509_NAME),
              let subjectDER = try? OpenSSLKey.encoded(subject, i2d_X509_NAME),
              let publicKey = X509_get_X509_PUBKEY(certificate),
              let spki = try? OpenSSLKey.encoded(publicKey, i2d_X509_PUBKEY)
        else { return nil }
        self.serialNumber = CertificateName.content(serialDER)
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.issuer = issuerDER
        self.subject = subjectDER
        self.issuerText = Self.text(issuer)
        self.subjectText = Self.text(subject)
        self.subjectPublicKeyInfo = spki
        self.subjectKeyIdentifier = X509_get0_subject_key_id(certificate).map(Self.bytes)
        self.keyUsageNames = Self.keyUsages(certificate)
        self.extendedKeyUsageNames = Self.extendedKeyUsages(certificate)
        (self.alternativeEmails, self.alternativeHosts) = Self.alternativeNames(certificate)
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    static func bytes(_ string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    static func text(_ name: OpaquePointer) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, keyhaven_XN_FLAG_RFC2253()) >= 0 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = keyhaven_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// The key usage extension's uses, in RFC 5280's words and order; empty without the extension.
    static func keyUsages(_ certificate: OpaquePointer) -> [String] {
        guard X509_get_extension_flags(certificate) & UInt32(EXFLAG_KUSAGE) != 0 else { return [] }
        let usage = X509_get_key_usage(certificate)
        let uses: [(Int32, String)] = [
            (KU_DIGITAL_SIGNATURE, "Digital Signature"), (KU_NON_REPUDIATION, "Non-Repudiation"),
            (KU_KEY_ENCIPHERMENT, "Key Encipherment"), (KU_DATA_ENCIPHERMENT, "Data Encipherment"),
            (KU_KEY_AGREEMENT, "Key Agreement"), (KU_KEY_CERT_SIGN, "Certificate Signing"), (KU_CRL_SIGN, "CRL Signing"),
            (KU_ENCIPHER_ONLY, "Encipher Only"), (KU_DECIPHER_ONLY, "Decipher Only"),
        ]
        return uses.filter { usage & UInt32($0.0) != 0 }.map(\.1)
    }

    /// The extended key usage extension's purposes; an unnamed one as its dotted OID.
    static func extendedKeyUsages(_ certificate: OpaquePointer) -> [String] {
        guard let raw = X509_get_ext_d2i(certificate, NID_ext_key_usage, nil, nil) else { return [] }
        defer { keyhaven_EXTENDED_KEY_USAGE_free(raw) }
        let usages = OpaquePointer(raw)
        let names: [Int32: String] = [
            NID_server_auth: "Server Authentication", NID_client_auth: "Client Authentication",
            NID_code_sign: "Code Signing", NID_email_protect: "E-mail Protection", NID_time_stamp: "Time Stamping",
            NID_OCSP_sign: "OCSP Signing", NID_anyExtendedKeyUsage: "Any",
        ]
        return (0..<keyhaven_sk_ASN1_OBJECT_num(usages)).compactMap { index in
            guard let object = keyhaven_sk_ASN1_OBJECT_value(usages, index) else { return nil }
            if let name = names[OBJ_obj2nid(object)] { return name }
            var buffer = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
            guard length > 0, Int(length) < buffer.count else { return nil }
            return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The subject alternative names' e-mail addresses and DNS names.
    static func alternativeNames(_ certificate: OpaquePointer) -> ([String], [String]) {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return ([], []) }
        defer { keyhaven_GENERAL_NAMES_free(raw) }
        let names = OpaquePointer(raw)
        var emails: [String] = [], hosts: [String] = []
        for index in 0..<keyhaven_sk_GENERAL_NAME_num(names) {
            guard let name = keyhaven_sk_GENERAL_NAME_value(names, index) else { continue }
            switch name.pointee.type {
            case GEN_EMAIL: if let value = name.pointee.d.rfc822Name { emails.append(Self.ascii(value)) }
            case GEN_DNS: if let value = name.pointee.d.dNSName { hosts.append(Self.ascii(value)) }
            default: continue
            }
        }
        return (emails, hosts)
    }

    static func ascii(_ string: UnsafeMutablePointer<ASN1_STRING>) -> String {
        String(decoding: bytes(UnsafePointer(string)), as: UTF8.self)
    }
}
