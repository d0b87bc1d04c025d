import Foundation
import KeychainModel
import KeyhavenTPM

/// `tpm-sign`: a program that has a Secure Enclave key's blob uses it on the TPM directly, as
/// tpm2-tools would, with the authorization it was given (hex, possibly empty).
func runTPMSign(tcti: String, publicArea: String, privateArea: String, authorization: String) -> Never {
    guard let publicBytes = hexBytes(publicArea), let privateBytes = hexBytes(privateArea), let auth = hexBytes(authorization) else {
        print("refused the blob or the authorization is not hex")
        exit(2)
    }
    do {
        let connection = try TPMConnection(tcti: tcti)
        let blob = TPMObjectBlob(publicArea: Data(publicBytes), privateArea: Data(privateBytes))
        let signature = try connection.sign([UInt8](repeating: 7, count: 32), with: blob, authorization: auth)
        print("signed \(signature.count)")
        exit(0)
    } catch {
        print("refused \(error.message)")
        exit(1)
    }
}

private func hexBytes(_ text: String) -> [UInt8]? {
    guard text.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}
