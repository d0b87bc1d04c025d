/// What `keyhaven tpm status` shows: the TPM the agent reaches, who made it, and its
/// dictionary-attack protection (TPM 2.0 Part 2, "TPM_PT" properties).
package struct TPMStatus: Sendable, Equatable {
    /// How the agent reaches it: a TCTI in tpm2-tss's syntax (`device:/dev/tpmrm0`, `swtpm:...`).
    package var tcti: String
    /// `TPM2_PT_MANUFACTURER` as its four letters ("IBM", "INTC", "IFX", ...).
    package var manufacturer: String
    /// `TPM2_PT_VENDOR_STRING_1` to `_4`.
    package var vendor: String
    /// `TPM2_PT_FIRMWARE_VERSION_1` and `_2`.
    package var firmware1: UInt32
    package var firmware2: UInt32
    /// Authorization failures counted now (`TPM2_PT_LOCKOUT_COUNTER`), the limit before lockout
    /// (`TPM2_PT_MAX_AUTH_FAIL`), the seconds after which one failure is forgotten
    /// (`TPM2_PT_LOCKOUT_INTERVAL`), and the seconds before the lockout authorization may be tried
    /// again after it failed (`TPM2_PT_LOCKOUT_RECOVERY`).
    package var failedTries: UInt32
    package var maxTries: UInt32
    package var recoveryTime: UInt32
    package var lockoutRecovery: UInt32
    /// `TPMA_PERMANENT.inLockout`: authorizations are refused until a failure is forgotten.
    package var inLockout: Bool
    /// `TPMA_PERMANENT.lockoutAuthSet`: the lockout hierarchy has an authorization. Without one,
    /// any program that reaches the TPM resets the failure count (`TPM2_DictionaryAttackLockReset`).
    package var lockoutAuthorizationSet: Bool

    package init(tcti: String, manufacturer: String, vendor: String, firmware1: UInt32, firmware2: UInt32, failedTries: UInt32,
                 maxTries: UInt32, recoveryTime: UInt32, lockoutRecovery: UInt32, inLockout: Bool, lockoutAuthorizationSet: Bool) {
        self.tcti = tcti
        self.manufacturer = manufacturer
        self.vendor = vendor
        self.firmware1 = firmware1
        self.firmware2 = firmware2
        self.failedTries = failedTries
        self.maxTries = maxTries
        self.recoveryTime = recoveryTime
        self.lockoutRecovery = lockoutRecovery
        self.inLockout = inLockout
        self.lockoutAuthorizationSet = lockoutAuthorizationSet
    }

    /// What the lockout authorization being empty means, and the command that sets one.
    package static let emptyLockoutAuthorization = "the TPM's lockout authorization is empty: any program that reaches the TPM "
        + "can reset its count of wrong passwords and guess a bound keychain's password without limit; set one as root "
        + "(and keep it safe): tpm2_changeauth -c lockout NEW-AUTHORIZATION"

    /// The firmware version as most vendors mean it: the high and low halves of each word.
    package var firmware: String {
        "\(firmware1 >> 16).\(firmware1 & 0xffff).\(firmware2 >> 16).\(firmware2 & 0xffff)"
    }
}

extension TPMStatus: WireCodable {
    package func write(to writer: inout ByteWriter) {
        tcti.write(to: &writer)
        manufacturer.write(to: &writer)
        vendor.write(to: &writer)
        for value in [firmware1, firmware2, failedTries, maxTries, recoveryTime, lockoutRecovery] { writer.u32(value) }
        inLockout.write(to: &writer)
        lockoutAuthorizationSet.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(tcti: try String(from: &reader), manufacturer: try String(from: &reader), vendor: try String(from: &reader),
                  firmware1: try reader.u32(), firmware2: try reader.u32(), failedTries: try reader.u32(), maxTries: try reader.u32(),
                  recoveryTime: try reader.u32(), lockoutRecovery: try reader.u32(), inLockout: try Bool(from: &reader),
                  lockoutAuthorizationSet: try Bool(from: &reader))
    }
}
