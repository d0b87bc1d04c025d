#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import Crypto
import KeychainModel

/// The shared secret of an ECDH agreement: swift-crypto's, or bytes from outside (the TPM's
/// `TPM2_ECDH_ZGen`), which swift-crypto cannot wrap. Either goes through the same ANSI X9.63 KDF:
/// swift-crypto's for its own, OpenSSL's `X963KDF` for the bytes.
enum AgreedSecret {
    case crypto(SharedSecret)
    case bytes([UInt8])

    /// The secret itself (the x-coordinate), for Apple's `algid:keyexchange:ECDH` without a KDF.
    var rawBytes: [UInt8] {
        switch self {
        case .crypto(let shared): return shared.withUnsafeBytes { Array($0) }
        case .bytes(let bytes): return bytes
        }
    }

    /// ANSI X9.63 KDF output of `byteCount` bytes with `sharedInfo`.
    func x963(_ hash: HashName, sharedInfo: [UInt8], byteCount: Int) throws(KeyError) -> [UInt8] {
        switch self {
        case .crypto(let shared): return try AsymmetricKey.x963(hash, shared, sharedInfo: sharedInfo, byteCount: byteCount)
        case .bytes(let secret): return try Self.opensslX963(hash, secret: secret, sharedInfo: sharedInfo, byteCount: byteCount)
        }
    }

    private static func opensslX963(_ hash: HashName, secret: [UInt8], sharedInfo: [UInt8], byteCount: Int) throws(KeyError) -> [UInt8] {
        guard hash != .sha224 else { throw KeyError(.unsupportedAlgorithm, "SHA-224 is not supported") }
        guard let kdf = EVP_KDF_fetch(nil, "X963KDF", nil) else { throw .param("OpenSSL has no X9.63 KDF") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw .param("OpenSSL could not start the X9.63 KDF") }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: byteCount)
        var key = secret, info = sharedInfo
        defer { zeroize(&key) }
        // An OSSL_PARAM keeps the pointers it is given: the names must outlive the derivation.
        let strings: [String] = ["digest", "key", "info", hash.rawValue]    // OSSL_KDF_PARAM_DIGEST, _KEY, _INFO
        let names = strings.map { strdup($0) }
        defer { names.forEach { free($0) } }
        let status = key.withUnsafeMutableBytes { keyBytes in
            info.withUnsafeMutableBytes { infoBytes in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(names[0], names[3], 0),
                    OSSL_PARAM_construct_octet_string(names[1], keyBytes.baseAddress, keyBytes.count),
                    OSSL_PARAM_construct_octet_string(names[2], infoBytes.baseAddress, infoBytes.count),
                    OSSL_PARAM_construct_end(),
                ]
                return output.withUnsafeMutableBufferPointer { EVP_KDF_derive(context, $0.baseAddress, $0.count, &parameters) }
            }
        }
        guard status == 1 else {
            zeroize(&output)
            throw .param("the X9.63 KDF failed")
        }
        return output
    }
}
