import CTSS2
import FoundationEssentials
import KeychainModel

/// One connection to the TPM through tpm2-tss: its TCTI loader and an ESAPI context. The agent
/// owns it (a software TPM without a resource manager serves one connection at a time); it is
/// used by one thread at a time (``TPMHost``'s lock).
package final class TPMConnection {
    /// The TCTI this connection went through.
    package let tcti: String
    private var tctiContext: OpaquePointer?
    private(set) var context: OpaquePointer?
    /// The storage parent (``storageParent()``), made on first use and flushed with the connection.
    var storageHandle = ESYS_TR(ESYS_TR_NONE)

    /// `KEYHAVEN_TPM` (a TCTI in tpm2-tss's syntax: `swtpm:host=127.0.0.1,port=2321`,
    /// `device:/dev/tpm0`), else the kernel's resource manager.
    package static var configured: String {
        ProcessInfo.processInfo.environment["KEYHAVEN_TPM"].flatMap { $0.isEmpty ? nil : $0 } ?? "device:/dev/tpmrm0"
    }

    /// Connects through `tcti`.
    package init(tcti: String = TPMConnection.configured) throws(TPMError) {
        self.tcti = tcti
        var loaded: OpaquePointer?
        var rc = Tss2_TctiLdr_Initialize(tcti, &loaded)
        guard rc == TSS2_RC_SUCCESS, let loaded else { throw TPMError(.unreachable, "no TPM reachable through \(tcti) (\(TPMError.decode(rc)))") }
        tctiContext = loaded
        var esys: OpaquePointer?
        rc = Esys_Initialize(&esys, loaded, nil)
        guard rc == TSS2_RC_SUCCESS, let esys else {
            Tss2_TctiLdr_Finalize(&tctiContext)
            throw TPMError(.unreachable, "no TPM answers through \(tcti) (\(TPMError.decode(rc)))")
        }
        context = esys
    }

    deinit {
        if storageHandle != ESYS_TR(ESYS_TR_NONE) { _ = Esys_FlushContext(context, storageHandle) }
        if context != nil { Esys_Finalize(&context) }
        if tctiContext != nil { Tss2_TctiLdr_Finalize(&tctiContext) }
    }

    /// The TPM properties from `first` on, up to `count` of them (`TPM2_CC_GetCapability`).
    package func properties(from first: UInt32, count: UInt32) throws(TPMError) -> [UInt32: UInt32] {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        let rc = Esys_GetCapability(context, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), TPM2_CAP(TPM2_CAP_TPM_PROPERTIES),
                                    first, count, &more, &data)
        guard rc == TSS2_RC_SUCCESS, let data else { throw TPMError("reading the TPM's properties", rc: rc) }
        defer { Esys_Free(data) }
        var properties: [UInt32: UInt32] = [:]
        for index in 0..<kh_tpm_property_count(data) {
            let property = kh_tpm_property(data, index)
            properties[property.property] = property.value
        }
        return properties
    }

    /// Who made the TPM and how its dictionary-attack protection stands.
    package func status() throws(TPMError) -> TPMStatus {
        // TPM 2.0 Part 2's TPM_PT values (their C macros hold casts Swift does not import).
        let fixedGroup: UInt32 = 0x100, variableGroup: UInt32 = 0x200
        let fixed = try properties(from: fixedGroup, count: 64)
        let variable = try properties(from: variableGroup, count: 32)
        func text(_ offsets: ClosedRange<UInt32>) -> String {
            var bytes: [UInt8] = []
            for offset in offsets {
                guard let value = fixed[fixedGroup + offset] else { continue }
                for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
            }
            return String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self).trimmed
        }
        return TPMStatus(tcti: tcti, manufacturer: text(5...5), vendor: text(6...9),
                         firmware1: fixed[fixedGroup + 11] ?? 0, firmware2: fixed[fixedGroup + 12] ?? 0,
                         failedTries: variable[variableGroup + 14] ?? 0, maxTries: variable[variableGroup + 15] ?? 0,
                         recoveryTime: variable[variableGroup + 16] ?? 0, lockoutRecovery: variable[variableGroup + 17] ?? 0,
                         inLockout: (variable[variableGroup] ?? 0) & 0x200 != 0,
                         lockoutAuthorizationSet: (variable[variableGroup] ?? 0) & 0x4 != 0)
    }

}
