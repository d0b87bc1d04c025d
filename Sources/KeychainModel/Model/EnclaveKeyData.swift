import FoundationEssentials

/// A Secure Enclave key as the keychain holds it: the data of a key item whose `tkid` is
/// ``tokenID``. Its public key, the TPM's blob of the private key (useless to any other TPM), and
/// the authorization the TPM asks before it uses the key (docs/tpm.md): the blob alone signs
/// nothing, through the agent or without it.
package struct EnclaveKeyData: Sendable, Hashable {
    /// `kSecAttrTokenIDSecureEnclave`.
    package static let tokenID = "com.apple.setoken"
    /// The format's version: the first byte. Version 1 had no authorization (the key's object
    /// has an empty one).
    static let version: UInt8 = 2

    /// The public key, X9.63 (`04 || X || Y`).
    package var publicKey: Data
    /// The key in the TPM.
    package var object: TPMObjectBlob
    /// The key object's authorization value (32 random bytes; empty for a version 1 key): held
    /// by the process that made the key, and inside the item's encrypted data once the key is
    /// stored, which the agent never hands out (the key is not extractable).
    package var authorization: [UInt8]

    package init(publicKey: Data, object: TPMObjectBlob, authorization: [UInt8]) {
        self.publicKey = publicKey
        self.object = object
        self.authorization = authorization
    }
}

extension EnclaveKeyData: CustomStringConvertible {
    package var description: String { "EnclaveKeyData(publicKey: \(publicKey.count) bytes, authorized: \(!authorization.isEmpty))" }
}

extension EnclaveKeyData: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u8(Self.version)
        publicKey.write(to: &writer)
        object.write(to: &writer)
        Data(authorization).write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        let version = try reader.u8()
        guard version == 1 || version == Self.version else { throw CodecError(.malformed, "not a Secure Enclave key of this format") }
        self.init(publicKey: try Data(from: &reader), object: try TPMObjectBlob(from: &reader),
                  authorization: version == 1 ? [] : Array(try Data(from: &reader)))
    }
}
