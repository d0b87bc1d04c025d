import Crypto
import FoundationEssentials
import KeychainModel

/// Apple's ECIES (`kSecKeyAlgorithmECIESEncryption{Standard,Cofactor}[VariableIV]X963<hash>AESGCM`).
///
/// An ephemeral key on the recipient's curve; ECDH with the recipient's key (cofactor and standard
/// ECDH agree on the NIST curves, whose cofactor is 1); the X9.63 KDF over the shared secret with
/// the ephemeral public key (X9.63 bytes) as shared info gives an AES key of 16 bytes for curves up
/// to 256 bits and 32 above, followed, in the variable-IV variants, by a 16-byte IV (otherwise 16
/// zero bytes). AES-GCM without associated data and a 16-byte tag. The output is
/// `ephemeral public key || ciphertext || tag`, byte for byte what an iPhone produces.
struct ECIES {
    let hash: HashName
    let variableIV: Bool

    static let tagByteCount = 16
    static let ivByteCount = 16

    func encrypt(_ plaintext: [UInt8], to recipient: ECPublicKey) throws(KeyError) -> [UInt8] {
        let recipientKey = AsymmetricKey.ecPublic(recipient)
        guard case .ecPrivate(let ephemeral) = try AsymmetricKey.generate(recipientKey.kind) else {
            throw .param("no ephemeral key")
        }
        let ephemeralPublic = Array(AsymmetricKey.ecPrivate(ephemeral).publicBytes)
        let shared = AgreedSecret.crypto(try AsymmetricKey.agreement(ephemeral, recipient))
        let (key, iv) = try derive(shared, ephemeralPublic: ephemeralPublic, curve: recipientKey.kind)
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: try AES.GCM.Nonce(data: iv))
            return ephemeralPublic + Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw .param("ECIES: AES-GCM encryption failed")
        }
    }

    func decrypt(_ packet: [UInt8], with key: ECPrivateKey) throws(KeyError) -> [UInt8] {
        try decrypt(packet, curve: AsymmetricKey.ecPrivate(key).kind) { (ephemeral) throws(KeyError) in
            .crypto(try AsymmetricKey.agreement(key, ephemeral))
        }
    }

    /// Decrypts with a private key on `curve` that `agree` uses (ECDH with the ephemeral key): a
    /// key this process holds, or one inside the TPM.
    func decrypt(_ packet: [UInt8], curve: KeyKind, agree: (ECPublicKey) throws(KeyError) -> AgreedSecret) throws(KeyError) -> [UInt8] {
        guard case .ec(let curveBits) = curve, packet.count >= curveBits.publicByteCount + Self.tagByteCount else {
            throw .param("too small input packet for ECIES decrypt")
        }
        let ephemeralPublic = Array(packet.prefix(curveBits.publicByteCount))
        guard case .ecPublic(let ephemeral) = try? AsymmetricKey(externalRepresentation: ephemeralPublic, keyType: 73, isPrivate: false),
              AsymmetricKey.ecPublic(ephemeral).kind == curve
        else {
            throw KeyError(.decryptionFailed, "ECIES: the ephemeral public key is not a point on the curve")
        }
        let shared = try agree(ephemeral)
        let (symmetric, iv) = try derive(shared, ephemeralPublic: ephemeralPublic, curve: curve)
        let body = packet[curveBits.publicByteCount...]
        do {
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: iv), ciphertext: body.dropLast(Self.tagByteCount),
                                            tag: body.suffix(Self.tagByteCount))
            return AsymmetricKey.copyAndClear(try AES.GCM.open(box, using: symmetric))
        } catch {
            throw KeyError(.decryptionFailed, "ECIES: Failed to aes-gcm decrypt data")
        }
    }

    private func derive(_ shared: AgreedSecret, ephemeralPublic: [UInt8],
                        curve: KeyKind) throws(KeyError) -> (SymmetricKey, [UInt8]) {
        let keyByteCount = curve.bits > 256 ? 32 : 16
        var material = try shared.x963(hash, sharedInfo: ephemeralPublic, byteCount: keyByteCount + (variableIV ? Self.ivByteCount : 0))
        defer { zeroize(&material) }
        let key = SymmetricKey(data: material.prefix(keyByteCount))
        let iv = variableIV ? Array(material.suffix(Self.ivByteCount)) : [UInt8](repeating: 0, count: Self.ivByteCount)
        return (key, iv)
    }
}
