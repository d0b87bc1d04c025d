import FoundationEssentials

/// A Secure Enclave key as the keychain holds it: the data of a key item whose `tkid` is
/// ``tokenID``. Its public key, and the TPM's blob of the private key (useless to any other TPM).
package struct EnclaveKeyData: Sendable, Hashable {
    /// `kSecAttrTokenIDSecureEnclave`.
    package static let tokenID = "com.apple.setoken"
    /// The format's version: the first byte.
    static let version: UInt8 = 1

    /// The public key, X9.63 (`04 || X || Y`).
    package var publicKey: Data
    /// The key in the TPM.
    package var object: TPMObjectBlob

    package init(publicKey: Data, object: TPMObjectBlob) {
        self.publicKey = publicKey
        self.object = object
    }
}

extension EnclaveKeyData: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u8(Self.version)
        publicKey.write(to: &writer)
        object.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        guard try reader.u8() == Self.version else { throw CodecError(.malformed, "not a Secure Enclave key of this format") }
        self.init(publicKey: try Data(from: &reader), object: try TPMObjectBlob(from: &reader))
    }
}
