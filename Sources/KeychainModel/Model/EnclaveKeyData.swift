import FoundationEssentials

/// A Secure Enclave key as the keychain holds it: the data of a key item whose `tkid` is
/// ``tokenID``. Its public key, and the TPM's blob of the private key (its public and private
/// areas, the private one wrapped by the TPM's storage key: useless to any other TPM).
package struct EnclaveKeyData: Sendable, Hashable {
    /// `kSecAttrTokenIDSecureEnclave`.
    package static let tokenID = "com.apple.setoken"
    /// The format's version: the first byte.
    static let version: UInt8 = 1

    /// The public key, X9.63 (`04 || X || Y`).
    package var publicKey: Data
    /// The TPM's public area of the key (TPM2B_PUBLIC, marshaled).
    package var tpmPublic: Data
    /// The TPM's wrapped private area (TPM2B_PRIVATE, marshaled).
    package var tpmPrivate: Data

    package init(publicKey: Data, tpmPublic: Data, tpmPrivate: Data) {
        self.publicKey = publicKey
        self.tpmPublic = tpmPublic
        self.tpmPrivate = tpmPrivate
    }
}

extension EnclaveKeyData: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u8(Self.version)
        publicKey.write(to: &writer)
        tpmPublic.write(to: &writer)
        tpmPrivate.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        guard try reader.u8() == Self.version else { throw CodecError(.malformed, "not a Secure Enclave key of this format") }
        self.init(publicKey: try Data(from: &reader), tpmPublic: try Data(from: &reader), tpmPrivate: try Data(from: &reader))
    }
}
