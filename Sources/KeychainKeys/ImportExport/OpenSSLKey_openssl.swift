// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import Crypto
import FoundationEssentials
import KeychainModel
import _CryptoExtras

/// Keys handed to and taken from the system OpenSSL, for the formats swift-crypto does not
/// write: OpenSSL's traditional encodings (SEC1 `EC PRIVATE KEY`, PKCS#1 `RSA PRIVATE KEY`) and
/// password-encrypted keys (PKCS#8 with PBES2, traditional PEM with `DEK-Info`).
///
/// Every key crosses as PKCS#8 DER, zeroed once read. Only the backend files of KeychainKeys
/// (`*_openssl.swift`) touch OpenSSL.
enum OpenSSLKey {
    /// OpenSSL's default and legacy providers, loaded once for the process (old files use RC2 and 3DES).
    static let providersLoaded: Bool = {
        OSSL_PROVIDER_load(nil, "legacy") != nil && OSSL_PROVIDER_load(nil, "default") != nil
    }()

    /// Our private key as an OpenSSL `EVP_PKEY` (the caller frees it).
    static func evpKey(_ key: AsymmetricKey) throws(ImportExportError) -> OpaquePointer {
        var der = try pkcs8(key)
        defer { zeroize(&der) }
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw ImportExportError(.malformed, "the private key could not be handed to OpenSSL") }
        return parsed
    }

    /// The PKCS#8 DER of a private key (the caller zeroes it).
    static func pkcs8(_ key: AsymmetricKey) throws(ImportExportError) -> [UInt8] {
        switch key {
        case .ecPrivate(.p256(let k)): return AsymmetricKey.copyAndClear(k.derRepresentation)
        case .ecPrivate(.p384(let k)): return AsymmetricKey.copyAndClear(k.derRepresentation)
        case .ecPrivate(.p521(let k)): return AsymmetricKey.copyAndClear(k.derRepresentation)
        case .rsaPrivate(let k): return AsymmetricKey.copyAndClear(k.pkcs8DERRepresentation)
        case .ecPublic, .rsaPublic: throw ImportExportError(.invalidParameter, "a public key has no private encoding")
        }
    }

    /// An OpenSSL `EVP_PKEY` as one of our private keys, through its PKCS#8 DER.
    static func asymmetricKey(_ key: OpaquePointer) throws(ImportExportError) -> AsymmetricKey {
        guard let info = EVP_PKEY2PKCS8(key) else { throw ImportExportError(.malformed, "the private key could not be read") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var der = try encoded(info, i2d_PKCS8_PRIV_KEY_INFO)
        defer { zeroize(&der) }
        return try privateKey(der: der)
    }

    /// A private key from PKCS#8, SEC1 or PKCS#1 DER (swift-crypto's parsers).
    static func privateKey(der: [UInt8]) throws(ImportExportError) -> AsymmetricKey {
        if let ec = try? P256.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p256(ec)) }
        if let ec = try? P384.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p384(ec)) }
        if let ec = try? P521.Signing.PrivateKey(derRepresentation: der) { return .ecPrivate(.p521(ec)) }
        if let rsa = try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: der), rsa.keySizeInBits >= 1024 { return .rsaPrivate(rsa) }
        throw ImportExportError(.unknownFormat, "not an EC (P-256, P-384, P-521) or RSA private key")
    }

    /// OpenSSL's traditional DER: SEC1 `ECPrivateKey` (with its curve and public key) or PKCS#1
    /// `RSAPrivateKey`, as `openssl ec` and `openssl rsa -traditional` write them.
    static func traditionalDER(_ key: AsymmetricKey) throws(ImportExportError) -> [UInt8] {
        let evp = try evpKey(key)
        defer { EVP_PKEY_free(evp) }
        return try encoded(evp, i2d_PrivateKey)
    }

    /// Encrypted PKCS#8 (`EncryptedPrivateKeyInfo`): PBES2 with PBKDF2-HMAC-SHA-256 and AES-256-CBC.
    static func encryptedPKCS8(_ key: AsymmetricKey, passphrase: [UInt8]) throws(ImportExportError) -> [UInt8] {
        _ = providersLoaded
        let evp = try evpKey(key)
        defer { EVP_PKEY_free(evp) }
        guard let info = EVP_PKEY2PKCS8(evp) else { throw ImportExportError(.malformed, "the private key could not be encoded") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let sealed = passphrase.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) {
                PKCS8_encrypt(-1, EVP_aes_256_cbc(), $0.baseAddress, Int32($0.count), nil, 0, Int32(ExportDefaults.iterations), info)
            }
        }
        guard let sealed else { throw ImportExportError(.malformed, "the private key could not be encrypted") }
        defer { X509_SIG_free(sealed) }
        return try encoded(sealed, i2d_X509_SIG)
    }

    /// The private key in encrypted PKCS#8 DER, opened with `passphrase`.
    static func decryptPKCS8(_ der: [UInt8], passphrase: [UInt8]) throws(ImportExportError) -> AsymmetricKey {
        _ = providersLoaded
        ERR_clear_error()
        defer { ERR_clear_error() }
        let sealed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_SIG(nil, &cursor, buffer.count)
        }
        guard let sealed else { throw ImportExportError(.unknownFormat, "not an encrypted PKCS#8 key") }
        defer { X509_SIG_free(sealed) }
        let info = passphrase.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { PKCS8_decrypt(sealed, $0.baseAddress, Int32($0.count)) }
        }
        guard let info else { throw ImportExportError(.wrongPassphrase, "the passphrase does not open the private key") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var plain = try encoded(info, i2d_PKCS8_PRIV_KEY_INFO)
        defer { zeroize(&plain) }
        return try privateKey(der: plain)
    }

    /// Whether `der` is an encrypted PKCS#8 key (whatever its passphrase).
    static func isEncryptedPKCS8(_ der: [UInt8]) -> Bool {
        let sealed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let parsed = d2i_X509_SIG(nil, &cursor, buffer.count) else { return nil }
            // All of it, not a prefix.
            guard cursor == buffer.baseAddress! + buffer.count else { X509_SIG_free(parsed); return nil }
            return parsed
        }
        defer { X509_SIG_free(sealed) }
        ERR_clear_error()
        return sealed != nil
    }

    /// OpenSSL's traditional encrypted PEM (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: DES-EDE3-CBC,...`),
    /// the form Apple's `kSecFormatWrappedOpenSSL` writes and reads.
    static func encryptedTraditionalPEM(_ key: AsymmetricKey, passphrase: [UInt8]) throws(ImportExportError) -> [UInt8] {
        _ = providersLoaded
        let evp = try evpKey(key)
        defer { EVP_PKEY_free(evp) }
        guard let bio = BIO_new(BIO_s_secmem()) ?? BIO_new(BIO_s_mem()) else { throw ImportExportError(.malformed, "out of memory") }
        defer { BIO_free(bio) }
        var pass = passphrase
        defer { zeroize(&pass) }
        let written = pass.withUnsafeMutableBufferPointer { buffer in
            PEM_write_bio_PrivateKey_traditional(bio, evp, EVP_des_ede3_cbc(), buffer.baseAddress, Int32(buffer.count), nil, nil)
        }
        guard written == 1 else { throw ImportExportError(.malformed, "the private key could not be encrypted") }
        var data: UnsafeMutablePointer<CChar>?
        let length = keyhaven_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { throw ImportExportError(.malformed, "the private key could not be encrypted") }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// A private key from one PEM block in OpenSSL's traditional encrypted form, opened with `passphrase`.
    static func decryptTraditionalPEM(_ text: [UInt8], passphrase: [UInt8]) throws(ImportExportError) -> AsymmetricKey {
        _ = providersLoaded
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard let bio = text.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw ImportExportError(.malformed, "out of memory")
        }
        defer { BIO_free(bio) }
        // OpenSSL reads the passphrase as a C string when no callback is given.
        var pass = passphrase.filter { $0 != 0 } + [0]
        defer { zeroize(&pass) }
        let key = pass.withUnsafeMutableBytes { PEM_read_bio_PrivateKey(bio, nil, nil, $0.baseAddress) }
        guard let key else { throw ImportExportError(.wrongPassphrase, "the passphrase does not open the private key") }
        defer { EVP_PKEY_free(key) }
        return try asymmetricKey(key)
    }

    /// OpenSSL's certificate for `der` (the caller frees it with `X509_free`); nil unless `der` is
    /// exactly one certificate (bytes after it included).
    static func certificate(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { X509_free(certificate); return nil }
            return certificate
        }
    }

    /// The DER that OpenSSL's `i2d_*` function writes for `object`.
    static func encoded(_ object: OpaquePointer,
                        _ i2d: (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws(ImportExportError)
        -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d(object, &buffer)
        guard length > 0, let buffer else { throw ImportExportError(.malformed, "OpenSSL could not encode the object") }
        let bytes = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        OPENSSL_cleanse(buffer, Int(length))
        CRYPTO_free(buffer, #fileID, #line)
        return bytes
    }
}

/// The password-based encryption of what Keyhaven exports (PKCS#8 keys and PKCS#12 files).
package enum ExportDefaults {
    /// PBKDF2 iterations (and PKCS#12 MAC iterations): 2048 is OpenSSL's default, which leaves a
    /// file's passphrase to cheap guessing; this is fifty times that, a few tens of milliseconds.
    package static let iterations = 100_000
}
