import CTSS2
import KeychainModel

/// A failure to reach or use the TPM, with tpm2-tss's own words for the TPM's response code.
/// Messages never hold authorization values or key material.
package struct TPMError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case unreachable, lockout, authFailed, foreignObject, resources, failed
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// No TPM answers through the configured TCTI (absent, busy, or its connection dropped).
        package static let unreachable = Code(.unreachable)
        /// The TPM's dictionary-attack protection refuses authorizations until it recovers.
        package static let lockout = Code(.lockout)
        /// An authorization value (a keychain's password) was wrong; the TPM counted it.
        package static let authFailed = Code(.authFailed)
        /// The TPM cannot open an object: another TPM made it, or this one was cleared since.
        package static let foreignObject = Code(.foreignObject)
        /// The TPM has no room for another object or session, or a handle the connection holds is no
        /// longer the object it was (another program flushed it, or the TPM restarted): the
        /// connection's state is stale, not the keychain.
        package static let resources = Code(.resources)
        /// The TPM refused the command for another reason.
        package static let failed = Code(.failed)

        package var description: String { "\(backing)" }
    }

    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The error of a failed ESAPI call: `what` failed, in tpm2-tss's decoding of `rc`.
    package init(_ what: String, rc: TSS2_RC) {
        let code: Code
        switch Self.layerAndNumber(rc) {
        case (0, 0x921): code = .lockout                         // TPM_RC_LOCKOUT
        case (0, 0x08e), (0, 0x0a2): code = .authFailed          // TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH
        case (10, _): code = .unreachable                         // the TCTI layer: the connection
        // TPM_RC_HANDLE; TPM_RC_CONTEXT_GAP, _OBJECT_MEMORY, _SESSION_MEMORY, _MEMORY,
        // _SESSION_HANDLES, _OBJECT_HANDLES, TPM_RC_REFERENCE_H0 to _H6 and _S0 to _S6.
        case (0, 0x08b), (0, 0x901...0x906), (0, 0x910...0x91e): code = .resources
        default: code = .failed
        }
        self.init(code, "\(what): \(Self.decode(rc))")
    }

    /// The layer (0: the TPM itself) and the response code's number: a format-one code carries the
    /// handle, parameter or session it is about, which is left out.
    static func layerAndNumber(_ rc: TSS2_RC) -> (UInt32, UInt32) {
        (rc >> 16, rc & 0x80 != 0 ? 0x80 | (rc & 0x3f) : rc & 0xfff)
    }

    /// tpm2-tss's words for a response code.
    static func decode(_ rc: TSS2_RC) -> String { Tss2_RC_Decode(rc).map { String(cString: $0) } ?? "response code \(rc)" }

    package var description: String { "TPMError(\(code)): \(message)" }

    /// The keychain's error for this failure: no TPM, or a TPM without room, is errSecNotAvailable,
    /// a lockout or a wrong password errSecAuthFailed (the message says which), an object of
    /// another TPM errSecDecode, anything else errSecInternal (the agent's internal error).
    package var storeError: StoreError {
        switch code {
        case .unreachable, .resources: return StoreError(.notAvailable, message)
        case .lockout, .authFailed: return StoreError(.authFailed, message)
        case .foreignObject: return StoreError(.decode, message)
        default: return StoreError(.internalError, message)
        }
    }
}
