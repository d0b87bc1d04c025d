import Crypto
import FoundationEssentials

/// Every cryptographic operation of the engine. Nothing else in the package calls swift-crypto.
///
/// - Blobs: AES-256-GCM (random 96-bit nonce, 128-bit tag) with associated data that names what
///   the blob is and which row it belongs to.
/// - Keys under keys: AES key wrap (RFC 3394) under a key derived for that one purpose.
/// - Search columns: HMAC-SHA-256 under the keychain's index key, truncated to 128 bits.
/// - Derivations: HKDF-SHA-256 with an info string per purpose.
package enum KeychainCrypto {
    /// A fresh random 256-bit key.
    package static func randomKey() -> SymmetricKey { SymmetricKey(size: .bits256) }

    /// Random bytes from the system's secure generator, eight at a time (each draw is a
    /// `getrandom` call: a byte at a time made an add cost 32 system calls).
    package static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var bytes = Data(count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                let word = generator.next().littleEndian
                let taken = min(8, count - offset)
                withUnsafeBytes(of: word) { buffer[offset..<(offset + taken)].copyBytes(from: $0.prefix(taken)) }
                offset += taken
            }
        }
        return bytes
    }

    /// Encrypts and authenticates `plaintext`; returns nonce || ciphertext || tag.
    package static func seal(_ plaintext: Data, key: SymmetricKey, context: some DataProtocol) throws(StoreError) -> Data {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: context)
            guard let combined = box.combined else { throw StoreError(.internalError, "AES-GCM produced no combined form") }
            return combined
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.internalError, "encryption failed")
        }
    }

    /// Authenticates and decrypts a blob made by ``seal(_:key:context:)``.
    ///
    /// Any failure (wrong key, wrong context, a flipped bit, a truncated blob) is `.decode`.
    package static func open(_ combined: Data, key: SymmetricKey, context: some DataProtocol) throws(StoreError) -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            return try AES.GCM.open(box, using: key, authenticating: context)
        } catch {
            throw StoreError(.decode, "stored data failed authentication")
        }
    }

    /// Wraps `key` under `kek` (RFC 3394).
    package static func wrap(_ key: SymmetricKey, under kek: SymmetricKey) throws(StoreError) -> Data {
        do {
            return try AES.KeyWrap.wrap(key, using: kek)
        } catch {
            throw StoreError(.internalError, "key wrap failed")
        }
    }

    /// Unwraps a key made by ``wrap(_:under:)``; a wrong KEK or damaged blob is `.decode`.
    package static func unwrap(_ wrapped: Data, under kek: SymmetricKey) throws(StoreError) -> SymmetricKey {
        do {
            return try AES.KeyWrap.unwrap(wrapped, using: kek)
        } catch {
            throw StoreError(.decode, "a wrapped key failed its integrity check")
        }
    }

    /// A key derived from `key` for one purpose.
    package static func derive(_ key: SymmetricKey, salt: Data = Data(), purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: Data(purpose.utf8), outputByteCount: 32)
    }

    /// SHA-1, only for Apple's `kSecAttrSHA1` item digest (not used for any protection).
    package static func sha1(_ bytes: Data) -> Data {
        Data(Insecure.SHA1.hash(data: bytes))
    }

    /// A key from 32 raw bytes, zeroing the caller's buffer afterwards.
    package static func key(consuming bytes: inout [UInt8]) -> SymmetricKey {
        let key = SymmetricKey(data: bytes)
        zeroize(&bytes)
        return key
    }
}

