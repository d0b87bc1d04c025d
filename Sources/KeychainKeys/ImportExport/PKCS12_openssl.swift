import COpenSSL
import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

/// One identity read from a PKCS#12 file.
package struct PKCS12Identity: Sendable {
    package let privateKey: AsymmetricKey
    package let certificate: CertificateInfo
    /// The other certificates of the file, in the file's order.
    package let chain: [CertificateInfo]
    /// The key's friendlyName and localKeyID attributes, if the file has them.
    package let label: String?
    package let keyID: Data?

    package init(privateKey: AsymmetricKey, certificate: CertificateInfo, chain: [CertificateInfo] = [], label: String? = nil,
                 keyID: Data? = nil) {
        (self.privateKey, self.certificate, self.chain, self.label, self.keyID) = (privateKey, certificate, chain, label, keyID)
    }
}

/// Why a PKCS#12 file could not be read.
package enum PKCS12Failure: Error, Sendable {
    /// The passphrase does not open it (its MAC does not verify).
    case wrongPassphrase
    /// Not a PKCS#12 file, truncated or damaged, or it holds no usable key and certificate.
    case malformed(String)
}

/// PKCS#12 through the system's OpenSSL 3 (its `PKCS12_parse` and `PKCS12_create`), with the
/// legacy provider loaded so that files made with `-legacy` (RC2-40, 3DES) open too.
package enum PKCS12 {
    /// The identity in `file`: its private key, the certificate that matches it, and the rest.
    package static func read(_ file: [UInt8], passphrase: String) throws(PKCS12Failure) -> PKCS12Identity {
        _ = OpenSSLKey.providersLoaded
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard !file.isEmpty, file.count <= 16 << 20 else { throw .malformed("the data is not a PKCS#12 file") }
        let p12 = file.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 else { throw .malformed("the data is not a PKCS#12 file") }
        defer { PKCS12_free(p12) }
        // An empty passphrase may have been written as no passphrase or as "": try both, as
        // OpenSSL's own PKCS12_parse does.
        var usesNull = false
        if PKCS12_mac_present(p12) == 1 {
            if PKCS12_verify_mac(p12, passphrase, Int32(passphrase.utf8.count)) != 1 {
                guard passphrase.isEmpty, PKCS12_verify_mac(p12, nil, 0) == 1 else { throw .wrongPassphrase }
                usesNull = true
            }
        }
        var key: OpaquePointer?, certificate: OpaquePointer?, others: OpaquePointer?
        guard PKCS12_parse(p12, usesNull ? nil : passphrase, &key, &certificate, &others) == 1 else {
            throw .malformed("the PKCS#12 file's contents could not be read")
        }
        defer {
            EVP_PKEY_free(key)
            X509_free(certificate)
            if let others { keyhaven_sk_X509_pop_free(others) }
        }
        guard let key, let certificate, let leaf = CertificateInfo(der: try derOf(certificate)) else {
            throw .malformed("the PKCS#12 file holds no private key with its certificate")
        }
        let privateKey: AsymmetricKey
        do { privateKey = try OpenSSLKey.asymmetricKey(key) } catch { throw .malformed(error.message) }
        guard privateKey.publicBytes == leaf.publicKey?.publicBytes else {
            throw .malformed("the PKCS#12 file's certificate is not its key's")
        }
        var chain: [CertificateInfo] = []
        if let others {
            for index in 0..<keyhaven_sk_X509_num(others) {
                if let other = keyhaven_sk_X509_value(others, index), let info = CertificateInfo(der: try derOf(other)) { chain.append(info) }
            }
        }
        var length: Int32 = 0
        let label = X509_alias_get0(certificate, &length).map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
        let keyID = X509_keyid_get0(certificate, &length).map { Data(UnsafeBufferPointer(start: $0, count: Int(length))) }
        return PKCS12Identity(privateKey: privateKey, certificate: leaf, chain: chain, label: label, keyID: keyID)
    }

    /// Whether `bytes` are one whole DER PKCS#12 structure (whatever its passphrase).
    package static func isPKCS12(_ bytes: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        return bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let p12 = d2i_PKCS12(nil, &cursor, buffer.count) else { return false }
            PKCS12_free(p12)
            return cursor == buffer.baseAddress! + buffer.count
        }
    }

    static func derOf(_ certificate: OpaquePointer) throws(PKCS12Failure) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &buffer)
        guard length > 0, let buffer else { throw .malformed("a certificate could not be encoded") }
        defer { CRYPTO_free(buffer, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }
}
