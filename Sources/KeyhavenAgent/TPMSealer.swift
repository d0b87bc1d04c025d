import FoundationEssentials
import KeychainStore
import KeyhavenTPM

/// The TPM as the keychains' ``HardwareSealer``: a bound keychain's secret sealed under the
/// storage parent, its password's authorization checked by the TPM under its dictionary-attack
/// protection (docs/tpm.md).
struct TPMSealer: HardwareSealer {
    let tpm: TPMHost

    func seal(_ secret: [UInt8], authorization: [UInt8]) throws(StoreError) -> Data {
        do throws(TPMError) {
            let blob = try tpm.use { (connection) throws(TPMError) in try connection.seal(secret, authorization: authorization) }
            return Data(blob.wireBytes)
        } catch {
            throw Self.storeError(error)
        }
    }

    func unseal(_ sealed: Data, authorization: [UInt8]) throws(StoreError) -> [UInt8] {
        let blob = try TPMObjectBlob(storedBytes: Array(sealed))
        do throws(TPMError) {
            return try tpm.use { (connection) throws(TPMError) in
                do throws(TPMError) {
                    return try connection.unseal(blob, authorization: authorization)
                } catch where error.code == .lockout || error.code == .authFailed {
                    // Say where the TPM's count stands, read on the same connection.
                    guard let status = try? connection.status() else { throw error }
                    if error.code == .authFailed && !status.inLockout {
                        throw TPMError(.authFailed, "the password is wrong (the TPM counted it: \(status.failedTries) of \(status.maxTries) "
                                       + "failures before it locks out)")
                    }
                    throw TPMError(.lockout, "the TPM is locked out after too many wrong passwords: it refuses every password, the right one "
                                   + "too, for up to \(status.recoveryTime) s (it forgets one failure every \(status.recoveryTime) s)")
                }
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    private static func storeError(_ error: TPMError) -> StoreError {
        switch error.code {
        case .lockout: return StoreError(.lockedOut, error.message)
        case .authFailed: return StoreError(.authFailed, error.message)
        case .foreignObject:
            return StoreError(.decode, "the keychain is bound to another TPM, or this TPM was cleared since: it cannot be opened here")
        case .unreachable: return StoreError(.notAvailable, "the keychain is bound to the TPM, and no TPM answers: \(error.message)")
        case .resources: return StoreError(.notAvailable, "the keychain is bound to the TPM, and the TPM cannot serve it now: \(error.message)")
        default: return error.storeError
        }
    }
}
