import FoundationEssentials

/// An object the TPM made under Keyhaven's storage parent, as the TPM gives it out: its public
/// area and its private area, both in the TPM's own marshaling (KeyhavenTPM reads and writes
/// them). The private area is wrapped by the storage parent, which derives from that TPM's owner
/// seed: only that TPM, until it is cleared, loads it.
package struct TPMObjectBlob: Sendable, Hashable {
    package var publicArea: Data
    package var privateArea: Data

    package init(publicArea: Data, privateArea: Data) {
        self.publicArea = publicArea
        self.privateArea = privateArea
    }
}

extension TPMObjectBlob: WireCodable {
    package func write(to writer: inout ByteWriter) {
        publicArea.write(to: &writer)
        privateArea.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(publicArea: try Data(from: &reader), privateArea: try Data(from: &reader))
    }
}
