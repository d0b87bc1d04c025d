// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
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

/// What a PKCS#12 file holds: each private key with the certificate of its public key (an
/// identity), and the certificates and keys that pair with nothing.
package struct PKCS12Contents: Sendable {
    /// In the file's order of keys; each identity's chain is the file's certificates that are no identity's.
    package var identities: [PKCS12Identity] = []
    package var certificates: [CertificateInfo] = []
    package var keys: [AsymmetricKey] = []
}

/// PKCS#12 through the system's OpenSSL 3 (its safe-bag functions), with the legacy provider
/// loaded so that files made with `-legacy` (RC2-40, 3DES), as macOS's Keychain Access writes
/// them, open too.
package enum PKCS12 {
    /// The first identity in `file` (`SecPKCS12Import` of a file with one).
    package static func read(_ file: [UInt8], passphrase: String) throws(PKCS12Failure) -> PKCS12Identity {
        guard let first = try readAll(file, passphrase: passphrase).identities.first else {
            throw .malformed("the PKCS#12 file holds no private key with its certificate")
        }
        return first
    }

    /// Every certificate and private key in `file`, keys paired with their certificates.
    package static func readAll(_ file: [UInt8], passphrase: String) throws(PKCS12Failure) -> PKCS12Contents {
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
        var password: String? = passphrase
        if PKCS12_mac_present(p12) == 1, PKCS12_verify_mac(p12, passphrase, Int32(passphrase.utf8.count)) != 1 {
            guard passphrase.isEmpty, PKCS12_verify_mac(p12, nil, 0) == 1 else { throw .wrongPassphrase }
            password = nil
        }
        guard let safes = PKCS12_unpack_authsafes(p12) else { throw .malformed("the PKCS#12 file's contents could not be read") }
        defer { keyhaven_sk_PKCS7_pop_free(safes) }
        var bags = BagContents(password: password)
        for index in 0..<keyhaven_sk_PKCS7_num(safes) {
            guard let safe = keyhaven_sk_PKCS7_value(safes, index) else { continue }
            let stack: OpaquePointer?
            switch keyhaven_PKCS7_type_nid(safe) {
            case NID_pkcs7_data: stack = PKCS12_unpack_p7data(safe)
            case NID_pkcs7_encrypted: stack = PKCS12_unpack_p7encdata(safe, password, password.map { Int32($0.utf8.count) } ?? 0)
            default: continue
            }
            guard let stack else { throw .malformed("a part of the PKCS#12 file could not be read (wrong passphrase, or damaged)") }
            defer { keyhaven_sk_PKCS12_SAFEBAG_pop_free(stack) }
            try bags.collect(stack, depth: 0)
        }
        return bags.paired()
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
}
