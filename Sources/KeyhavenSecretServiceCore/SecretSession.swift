import COpenSSL
import Crypto
import FoundationEssentials
import _CryptoExtras
import KeyhavenDBus
import KeychainModel

/// One Secret Service session: how secrets cross the bus for one client (spec "Transfer of
/// Secrets"). `plain` sends them as they are; `dh-ietf1024-sha256-aes128-cbc-pkcs7` agrees on
/// an AES-128 key by Diffie-Hellman in RFC 2409's 1024-bit group (generator 2), HKDF-SHA256 of
/// the shared secret (no salt, no info), and sends each secret AES-128-CBC with PKCS#7 padding
/// under a fresh random IV, as libsecret and gnome-keyring do.
package final class SecretSession: Sendable {
    package let path: String
    /// The unique bus name of the client that opened it; no other may use it.
    package let owner: String
    private let key: SymmetricKey?

    package static let plainAlgorithm = "plain"
    package static let dhAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    private init(path: String, owner: String, key: SymmetricKey?) {
        self.path = path
        self.owner = owner
        self.key = key
    }

    /// A `plain` session.
    package static func plain(path: String, owner: String) -> SecretSession { SecretSession(path: path, owner: owner, key: nil) }

    /// A DH session from the client's public key; returns it with the provider's public key.
    package static func negotiate(path: String, owner: String, clientPublicKey: [UInt8]) throws(BusError) -> (SecretSession, [UInt8]) {
        let exchange = try DiffieHellman()
        let key = try exchange.sharedKey(peer: clientPublicKey, whose: "the client's")
        return (SecretSession(path: path, owner: owner, key: key), exchange.publicKey)
    }

    /// A client's DH session: `exchange` sent its public key in OpenSession, and the provider
    /// answered with `providerPublicKey` and the session's `path`.
    package static func client(path: String, exchange: DiffieHellman, providerPublicKey: [UInt8]) throws(BusError) -> SecretSession {
        SecretSession(path: path, owner: "", key: try exchange.sharedKey(peer: providerPublicKey, whose: "the provider's"))
    }

    /// A secret as the `(oayays)` struct for this session.
    package func encode(_ secret: Data, contentType: String) throws(BusError) -> BusValue {
        guard let key else {
            return .structure([.objectPath(path), .bytes([]), .bytes(Array(secret)), .string(contentType)])
        }
        let iv = AES._CBC.IV()
        do {
            let ciphertext = try AES._CBC.encrypt(secret, using: key, iv: iv)
            let ivBytes = Array(iv)
            return .structure([.objectPath(path), .bytes(ivBytes), .bytes(Array(ciphertext)), .string(contentType)])
        } catch {
            throw .failed("the secret could not be encrypted for the session")
        }
    }

    /// The secret and content type of an `(oayays)` struct sent in this session.
    package func decode(_ value: BusValue) throws(BusError) -> (secret: Data, contentType: String) {
        guard case .structure(let fields) = value, fields.count == 4, fields[0].stringValue == path,
              let parameters = fields[1].bytesValue, let sealed = fields[2].bytesValue, let contentType = fields[3].stringValue else {
            throw .invalidArguments("the secret is not a (oayays) of this session")
        }
        guard let key else {
            guard parameters.isEmpty else { throw .invalidArguments("a plain session's secret has parameters") }
            return (Data(sealed), contentType)
        }
        guard parameters.count == 16, sealed.count % 16 == 0, !sealed.isEmpty else {
            throw .invalidArguments("the secret is not AES-128-CBC with a 16-byte IV")
        }
        do {
            let secret = try AES._CBC.decrypt(sealed, using: key, iv: try AES._CBC.IV(ivBytes: parameters))
            return (secret, contentType)
        } catch {
            throw .invalidArguments("the secret does not decrypt with the session's key")
        }
    }
}

/// One side of the Secret Service's Diffie-Hellman exchange: RFC 2409's 1024-bit group,
/// generator 2, a private exponent in [2, p - 2] in OpenSSL's secure heap, constant-time
/// exponentiation; the shared secret (128 bytes, big-endian) through HKDF-SHA256 to 16 bytes.
package final class DiffieHellman: @unchecked Sendable {
    // @unchecked: the BIGNUMs are written in init only and read after.
    private let prime: OpaquePointer
    private let privateKey: OpaquePointer
    /// This side's public key, 128 bytes big-endian.
    package let publicKey: [UInt8]

    package init() throws(BusError) {
        guard let prime = BN_get_rfc2409_prime_1024(nil) else { throw .failed("out of memory") }
        guard let privateKey = BN_secure_new() else { BN_free(prime); throw .failed("out of memory") }
        var kept = false
        defer { if !kept { BN_clear_free(privateKey); BN_free(prime) } }
        guard let context = BN_CTX_new() else { throw .failed("out of memory") }
        defer { BN_CTX_free(context) }
        guard let generator = BN_new(), let publicNumber = BN_new(), let bound = BN_new() else { throw .failed("out of memory") }
        defer { BN_free(generator); BN_free(publicNumber); BN_free(bound) }
        BN_copy(bound, prime)
        BN_sub_word(bound, 1)
        BN_set_word(generator, 2)
        repeat {
            guard BN_priv_rand_range(privateKey, bound) == 1 else { throw .failed("no random numbers") }
        } while BN_cmp(privateKey, BN_value_one()) <= 0
        var ours = [UInt8](repeating: 0, count: 128)
        guard BN_mod_exp_mont_consttime(publicNumber, generator, privateKey, prime, context, nil) == 1,
              BN_bn2binpad(publicNumber, &ours, 128) == 128 else {
            throw .failed("the Diffie-Hellman computation failed")
        }
        self.prime = prime
        self.privateKey = privateKey
        publicKey = ours
        kept = true
    }

    deinit {
        BN_clear_free(privateKey)
        BN_free(prime)
    }

    /// The session key agreed with `peer`'s public key, which must lie in [2, p - 2] (0, 1 and
    /// p - 1 give a known shared secret).
    func sharedKey(peer peerKey: [UInt8], whose: String) throws(BusError) -> SymmetricKey {
        guard !peerKey.isEmpty, peerKey.count <= 128 else {
            throw .invalidArguments("\(whose) Diffie-Hellman public key is not a number of the 1024-bit group")
        }
        guard let context = BN_CTX_new() else { throw .failed("out of memory") }
        defer { BN_CTX_free(context) }
        guard let peer = BN_bin2bn(peerKey, Int32(peerKey.count), nil), let shared = BN_secure_new(), let bound = BN_new() else {
            throw .failed("out of memory")
        }
        defer { BN_free(peer); BN_clear_free(shared); BN_free(bound) }
        BN_copy(bound, prime)
        BN_sub_word(bound, 1)
        guard BN_cmp(peer, BN_value_one()) > 0, BN_cmp(peer, bound) < 0 else {
            throw .invalidArguments("\(whose) Diffie-Hellman public key is out of range")
        }
        var sharedBytes = [UInt8](repeating: 0, count: 128)
        defer { for index in sharedBytes.indices { sharedBytes[index] = 0 } }
        guard BN_mod_exp_mont_consttime(shared, peer, privateKey, prime, context, nil) == 1,
              BN_bn2binpad(shared, &sharedBytes, 128) == 128 else {
            throw .failed("the Diffie-Hellman computation failed")
        }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: sharedBytes), outputByteCount: 16)
    }
}
