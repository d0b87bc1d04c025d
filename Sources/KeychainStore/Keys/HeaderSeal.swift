import Crypto
import FoundationEssentials

/// The header's authentication (format 2): what the header says about the password function, the
/// lock settings and the keys' epoch cannot be changed by someone who can write the file but has
/// no key (switching the auto-lock off, say, or asking for other scrypt parameters).
///
/// `mac` = HMAC-SHA256 under `HKDF-SHA256(index key, info: "keyhaven/v2/header")` over
/// `"keyhaven/v2/header" || u32 format || id || u8 hasKDF [|| u32 length || kdf] || u32 length ||
/// settings || u64 epoch` (settings in their encoding, the defaults when the row is absent). The
/// index key opens with the device key, so the header is checked on open, before the password.
enum HeaderSeal {
    static func key(index: SymmetricKey) -> SymmetricKey {
        KeychainCrypto.derive(index, purpose: "keyhaven/v2/header")
    }

    static func mac(format: Int64, id: Data, kdf: PasswordKDF?, settings: LockSettings, epoch: Int64,
                    index: SymmetricKey) -> Data {
        let message = self.message(format: format, id: id, kdf: kdf, settings: settings, epoch: epoch)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key(index: index)))
    }

    /// Checks a format-2 header (in constant time); `.invalidKeychain` when it was altered.
    static func verify(_ header: KeychainFile.Header, index: SymmetricKey) throws(StoreError) {
        guard header.format >= 2 else { return }
        let message = self.message(format: header.format, id: header.id, kdf: header.kdf, settings: header.settings,
                                   epoch: header.epoch)
        guard let stored = header.mac,
              HMAC<SHA256>.isValidAuthenticationCode(stored, authenticating: message, using: key(index: index)) else {
            throw StoreError(.invalidKeychain, "the keychain's header was altered (its password or lock settings do not verify)")
        }
    }

    private static func message(format: Int64, id: Data, kdf: PasswordKDF?, settings: LockSettings, epoch: Int64) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw("keyhaven/v2/header".utf8)
        writer.u32(UInt32(truncatingIfNeeded: format))
        writer.raw(id)
        if let kdf {
            writer.u8(1)
            let encoded = kdf.encoded
            writer.u32(UInt32(encoded.count))
            writer.raw(encoded)
        } else {
            writer.u8(0)
        }
        let encodedSettings = settings.encoded
        writer.u32(UInt32(encodedSettings.count))
        writer.raw(encodedSettings)
        writer.u64(UInt64(bitPattern: epoch))
        return writer.bytes
    }
}
