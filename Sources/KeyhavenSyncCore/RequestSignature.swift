import Crypto
import FoundationEssentials
import KeychainModel

/// A device's signature on one HTTP request to the sync server, so the server serves an account's
/// log only to the devices on it (a removed device can no longer pull) without any password or
/// token it could leak: the server holds only the devices' public keys.
///
/// The signature covers a domain label, the method, the target (path and query), the date and the
/// SHA-256 of the body; the server accepts a date at most ``maximumSkew`` seconds from its clock.
/// Three headers carry it: `Keyhaven-Device` (the device id in hex), `Keyhaven-Date` (Unix
/// seconds) and `Keyhaven-Signature` (the Ed25519 signature in hex).
package struct RequestSignature: Hashable, Sendable {
    package static let maximumSkew: Int64 = 300
    package static let deviceHeader = "Keyhaven-Device"
    package static let dateHeader = "Keyhaven-Date"
    package static let signatureHeader = "Keyhaven-Signature"

    package let device: DeviceID
    package let date: Int64
    package let signature: [UInt8]

    /// Signs a request as `identity`, dated `date` (now by default).
    package init(method: String, target: String, body: [UInt8], date: Int64 = Int64(Date().timeIntervalSince1970),
                 by identity: DeviceIdentity) {
        (device, self.date) = (identity.id, date)
        signature = identity.sign(Self.signedBytes(method: method, target: target, date: date, body: body))
    }

    /// Reads the three headers; nil when one is missing or malformed.
    package init?(device: String?, date: String?, signature: String?) {
        guard let device = device.flatMap(DeviceID.init(hex:)), let date = date.flatMap({ Int64($0) }),
              let signature, signature.utf8.count == 128,
              let bytes = Hex.decode(signature) else { return nil }
        (self.device, self.date, self.signature) = (device, date, bytes)
    }

    /// The header values, in the order of ``deviceHeader``, ``dateHeader``, ``signatureHeader``.
    package var headers: [(name: String, value: String)] {
        [(Self.deviceHeader, device.hex), (Self.dateHeader, String(date)),
         (Self.signatureHeader, Hex.encode(signature))]
    }

    /// Whether this signs that request with `keys` and its date is within the skew of `now`.
    package func isValid(method: String, target: String, body: [UInt8], keys: DevicePublicKeys,
                         now: Int64 = Int64(Date().timeIntervalSince1970)) -> Bool {
        guard abs(now - date) <= Self.maximumSkew else { return false }
        return keys.signingKey.isValidSignature(signature, for: Self.signedBytes(method: method, target: target, date: date, body: body))
    }

    static func signedBytes(method: String, target: String, date: Int64, body: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw("keyhaven sync request v1".utf8)
        for field in [method, target] {
            writer.u32(UInt32(field.utf8.count))
            writer.raw(field.utf8)
        }
        writer.u64(UInt64(bitPattern: date))
        writer.raw(Array(SHA256.hash(data: body)))
        return writer.bytes
    }
}
