import CTSS2
import FoundationEssentials
import KeychainModel

/// A ``TPMObjectBlob`` to and from the structures tpm2-tss's ESAPI takes.
extension TPMObjectBlob {
    init(_ publicPart: UnsafePointer<TPM2B_PUBLIC>, _ privatePart: UnsafePointer<TPM2B_PRIVATE>) throws(TPMError) {
        self.init(publicArea: try Self.marshal { buffer, size, offset in Tss2_MU_TPM2B_PUBLIC_Marshal(publicPart, buffer, size, offset) },
                  privateArea: try Self.marshal { buffer, size, offset in Tss2_MU_TPM2B_PRIVATE_Marshal(privatePart, buffer, size, offset) })
    }

    /// The public and private areas as the TPM takes them (``TPMError/Code-swift.struct/foreignObject``
    /// when the bytes are not a TPM object's).
    func unmarshaled() throws(TPMError) -> (TPM2B_PUBLIC, TPM2B_PRIVATE) {
        var publicPart = TPM2B_PUBLIC(), privatePart = TPM2B_PRIVATE()
        let publicBytes = Array(publicArea), privateBytes = Array(privateArea)
        var offset = 0
        var rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(publicBytes, publicBytes.count, &offset, &publicPart)
        guard rc == TSS2_RC_SUCCESS, offset == publicBytes.count else { throw TPMError(.foreignObject, "the TPM object's public area is damaged") }
        offset = 0
        rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(privateBytes, privateBytes.count, &offset, &privatePart)
        guard rc == TSS2_RC_SUCCESS, offset == privateBytes.count else { throw TPMError(.foreignObject, "the TPM object's private area is damaged") }
        return (publicPart, privatePart)
    }

    private static func marshal(_ body: (UnsafeMutablePointer<UInt8>, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) throws(TPMError) -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size + MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        let rc = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count, &offset) }
        guard rc == TSS2_RC_SUCCESS else { throw TPMError("marshaling a TPM object", rc: rc) }
        return Data(buffer.prefix(offset))
    }
}
