// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import Crypto
import FoundationEssentials
import KeychainModel

extension PKCS12 {
    /// A PKCS#12 file of `parts` (certificates and private keys), as OpenSSL 3 writes one by
    /// default: PBES2 with AES-256-CBC and PBKDF2-HMAC-SHA-256 for the keys and the certificates,
    /// an HMAC-SHA-256 MAC, and `ExportDefaults.iterations` rounds for each. A key and the
    /// certificate of its public key share a localKeyID (SHA-1 of the certificate) and a
    /// friendlyName (`label`, else the certificate's subject summary), so each pair reads back as
    /// an identity.
    package static func write(_ parts: [ExternalItem], label: String? = nil, passphrase: String) throws(ImportExportError) -> [UInt8] {
        _ = OpenSSLKey.providersLoaded
        ERR_clear_error()
        defer { ERR_clear_error() }
        var certificates: [CertificateInfo] = [], keys: [AsymmetricKey] = []
        for part in parts {
            switch part {
            case .certificate(let certificate): certificates.append(certificate)
            case .key(let key) where key.isPrivate: keys.append(key)
            default: throw ImportExportError(.unsupportedFormat, "a PKCS#12 file holds certificates and private keys only")
            }
        }
        var certificateBags: OpaquePointer?, keyBags: OpaquePointer?, safes: OpaquePointer?
        defer {
            if let certificateBags { keyhaven_sk_PKCS12_SAFEBAG_pop_free(certificateBags) }
            if let keyBags { keyhaven_sk_PKCS12_SAFEBAG_pop_free(keyBags) }
            if let safes { keyhaven_sk_PKCS7_pop_free(safes) }
        }
        let iterations = Int32(ExportDefaults.iterations)
        for certificate in certificates {
            let x509 = try openSSLCertificate(certificate.der)
            defer { X509_free(x509) }
            guard let bag = PKCS12_add_cert(&certificateBags, x509) else { throw ImportExportError(.malformed, "a certificate could not be added") }
            if keys.contains(where: { $0.publicBytes == certificate.publicKey?.publicBytes }) {
                try mark(bag, id: Array(Insecure.SHA1.hash(data: certificate.der)), name: label ?? certificate.subjectSummary)
            }
        }
        for key in keys {
            let evp = try OpenSSLKey.evpKey(key)
            defer { EVP_PKEY_free(evp) }
            guard let bag = PKCS12_add_key(&keyBags, evp, 0, iterations, NID_aes_256_cbc, passphrase) else {
                throw ImportExportError(.malformed, "a private key could not be added")
            }
            if let certificate = certificates.first(where: { $0.publicKey?.publicBytes == key.publicBytes }) {
                try mark(bag, id: Array(Insecure.SHA1.hash(data: certificate.der)), name: label ?? certificate.subjectSummary)
            }
        }
        if let certificateBags, PKCS12_add_safe(&safes, certificateBags, NID_aes_256_cbc, iterations, passphrase) != 1 {
            throw ImportExportError(.malformed, "the certificates could not be encrypted")
        }
        if let keyBags, PKCS12_add_safe(&safes, keyBags, -1, 0, nil) != 1 {
            throw ImportExportError(.malformed, "the keys could not be added")
        }
        guard let safes, let p12 = PKCS12_add_safes(safes, 0) else { throw ImportExportError(.malformed, "the file could not be made") }
        defer { PKCS12_free(p12) }
        guard PKCS12_set_mac(p12, passphrase, -1, nil, 0, iterations, EVP_sha256()) == 1 else {
            throw ImportExportError(.malformed, "the file's MAC could not be made")
        }
        return try OpenSSLKey.encoded(p12, i2d_PKCS12)
    }

    /// A PKCS#12 file of one identity and its chain (the command's `export -t identities`).
    package static func write(privateKey: AsymmetricKey, certificate: CertificateInfo, chain: [CertificateInfo],
                              label: String?, passphrase: String) throws(ImportExportError) -> [UInt8] {
        try write([.certificate(certificate), .key(privateKey)] + chain.map { .certificate($0) }, label: label, passphrase: passphrase)
    }

    private static func mark(_ bag: OpaquePointer, id: [UInt8], name: String?) throws(ImportExportError) {
        var id = id
        guard PKCS12_add_localkeyid(bag, &id, Int32(id.count)) == 1,
              name.map({ PKCS12_add_friendlyname_utf8(bag, $0, -1) == 1 }) ?? true else {
            throw ImportExportError(.malformed, "a bag's attributes could not be set")
        }
    }

    private static func openSSLCertificate(_ der: [UInt8]) throws(ImportExportError) -> OpaquePointer {
        guard let parsed = OpenSSLKey.certificate(der) else { throw ImportExportError(.malformed, "a certificate could not be handed to OpenSSL") }
        return parsed
    }
}
