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
    /// OpenSSL's default and legacy providers, loaded once for the process.
    private static let providersLoaded: Bool = {
        OSSL_PROVIDER_load(nil, "legacy") != nil && OSSL_PROVIDER_load(nil, "default") != nil
    }()

    /// The identity in `file`: its private key, the certificate that matches it, and the rest.
    package static func read(_ file: [UInt8], passphrase: String) throws(PKCS12Failure) -> PKCS12Identity {
        _ = providersLoaded
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
        let privateKey = try privateKey(key)
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

    private static func derOf(_ certificate: OpaquePointer) throws(PKCS12Failure) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &buffer)
        guard length > 0, let buffer else { throw .malformed("a certificate could not be encoded") }
        defer { CRYPTO_free(buffer, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// The key as one of Keyhaven's, through its PKCS#8 DER (zeroed once read).
    private static func privateKey(_ key: OpaquePointer) throws(PKCS12Failure) -> AsymmetricKey {
        guard let info = EVP_PKEY2PKCS8(key) else { throw .malformed("the private key could not be read") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, &buffer)
        guard length > 0, let buffer else { throw .malformed("the private key could not be read") }
        var der = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        OPENSSL_cleanse(buffer, Int(length))
        CRYPTO_free(buffer, #fileID, #line)
        defer { zeroize(&der) }
        if let ec = try? P256.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p256(ec)) }
        if let ec = try? P384.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p384(ec)) }
        if let ec = try? P521.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p521(ec)) }
        if let rsa = try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: der) { return .rsaPrivate(rsa) }
        throw .malformed("the private key is not an EC (P-256, P-384, P-521) or RSA key")
    }
}

extension PKCS12 {
    /// A PKCS#12 file holding `privateKey` with `certificate` (and `chain`), encrypted with
    /// OpenSSL 3's defaults: PBES2 with AES-256-CBC and PBKDF2, and an HMAC-SHA-256 MAC.
    package static func write(privateKey: AsymmetricKey, certificate: CertificateInfo, chain: [CertificateInfo],
                              label: String?, passphrase: String) throws(PKCS12Failure) -> [UInt8] {
        _ = providersLoaded
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard privateKey.isPrivate else { throw .malformed("a PKCS#12 file needs a private key") }
        let key = try openSSLKey(privateKey)
        defer { EVP_PKEY_free(key) }
        let leaf = try openSSLCertificate(certificate.der)
        defer { X509_free(leaf) }
        guard let others = keyhaven_sk_X509_new_null() else { throw .malformed("out of memory") }
        defer { keyhaven_sk_X509_pop_free(others) }
        for member in chain {
            let x509 = try openSSLCertificate(member.der)
            guard keyhaven_sk_X509_push(others, x509) > 0 else { X509_free(x509); throw .malformed("out of memory") }
        }
        guard let p12 = PKCS12_create(passphrase, label, key, leaf, others, 0, 0, 0, 0, 0) else {
            throw .malformed("the PKCS#12 file could not be made (is the certificate the key's?)")
        }
        defer { PKCS12_free(p12) }
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS12(p12, &buffer)
        guard length > 0, let buffer else { throw .malformed("the PKCS#12 file could not be encoded") }
        defer { CRYPTO_free(buffer, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// Our key in OpenSSL, through its PKCS#8 DER (zeroed once read).
    private static func openSSLKey(_ key: AsymmetricKey) throws(PKCS12Failure) -> OpaquePointer {
        var der: [UInt8]
        switch key {
        case .ecPrivate(.p256(let k)): der = AsymmetricKey.copyAndClear(k.derRepresentation)
        case .ecPrivate(.p384(let k)): der = AsymmetricKey.copyAndClear(k.derRepresentation)
        case .ecPrivate(.p521(let k)): der = AsymmetricKey.copyAndClear(k.derRepresentation)
        case .rsaPrivate(let k): der = AsymmetricKey.copyAndClear(k.pkcs8DERRepresentation)
        default: throw .malformed("a PKCS#12 file needs a private key")
        }
        defer { zeroize(&der) }
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .malformed("the private key could not be handed to OpenSSL") }
        return parsed
    }

    private static func openSSLCertificate(_ der: [UInt8]) throws(PKCS12Failure) -> OpaquePointer {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .malformed("a certificate could not be handed to OpenSSL") }
        return parsed
    }
}
