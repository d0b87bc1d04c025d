import Crypto
import FoundationEssentials
import KeychainModel

/// A device's public keys, as the roster carries them: Ed25519 for its signatures, X25519 for the
/// key shares sealed to it.
package struct DevicePublicKeys: Hashable, Sendable, WireCodable {
    package let signing: [UInt8]
    package let agreement: [UInt8]

    package init(signing: [UInt8], agreement: [UInt8]) throws(SyncError) {
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: signing)) != nil,
              (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: agreement)) != nil else {
            throw SyncError(.malformed, "a device's public keys are not Ed25519 and X25519 keys")
        }
        (self.signing, self.agreement) = (signing, agreement)
    }

    var signingKey: Curve25519.Signing.PublicKey {
        // Checked when made.
        try! Curve25519.Signing.PublicKey(rawRepresentation: signing)
    }

    var agreementKey: Curve25519.KeyAgreement.PublicKey {
        try! Curve25519.KeyAgreement.PublicKey(rawRepresentation: agreement)
    }

    package func write(to writer: inout ByteWriter) {
        writer.raw(signing)
        writer.raw(agreement)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        let signing = Array(try reader.take(32)), agreement = Array(try reader.take(32))
        do {
            try self.init(signing: signing, agreement: agreement)
        } catch {
            throw CodecError(.malformed, error.message)
        }
    }
}

/// A device's own keys: they never leave it. The private keys live in swift-crypto's objects
/// (BoringSSL zeroes them when freed); their descriptions show nothing of them.
package struct DeviceIdentity: Sendable, CustomStringConvertible {
    package let id: DeviceID
    let signingKey: Curve25519.Signing.PrivateKey
    let agreementKey: Curve25519.KeyAgreement.PrivateKey

    /// A new device: a random id and new keys.
    package init() {
        id = DeviceID()
        signingKey = Curve25519.Signing.PrivateKey()
        agreementKey = Curve25519.KeyAgreement.PrivateKey()
    }

    /// A device from its stored private keys (32 bytes each).
    package init(id: DeviceID, signingKey: [UInt8], agreementKey: [UInt8]) throws(SyncError) {
        do {
            self.signingKey = try Curve25519.Signing.PrivateKey(rawRepresentation: signingKey)
            self.agreementKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: agreementKey)
        } catch {
            throw SyncError(.malformed, "a device's stored keys are not Ed25519 and X25519 keys")
        }
        self.id = id
    }

    package var publicKeys: DevicePublicKeys {
        // Keys swift-crypto made are valid.
        try! DevicePublicKeys(signing: Array(signingKey.publicKey.rawRepresentation),
                              agreement: Array(agreementKey.publicKey.rawRepresentation))
    }

    /// The private keys, for the device's own encrypted storage; the caller zeroes them.
    package func withPrivateKeys<R>(_ body: (_ signing: [UInt8], _ agreement: [UInt8]) throws -> R) rethrows -> R {
        var signing = Array(signingKey.rawRepresentation), agreement = Array(agreementKey.rawRepresentation)
        defer {
            zeroize(&signing)
            zeroize(&agreement)
        }
        return try body(signing, agreement)
    }

    func sign(_ bytes: [UInt8]) -> [UInt8] {
        // Ed25519 signing does not fail for a valid key.
        Array(try! signingKey.signature(for: bytes))
    }

    package var description: String { "<DeviceIdentity \(id)>" }
}
