import FoundationEssentials
import KeychainModel

/// A `u8` tag, then the case's fields (docs/agent-protocol.md, "Answers").
extension AgentResponse: WireCodable {
    /// The u8 tag of each answer; never reuse one.
    private enum Tag: UInt8 {
        case failure = 0, done, hello, item, items, status, settings, count, bytes, tpmStatus, enclaveKey, provider, grants, sshUses, syncRound, syncStatus, syncDevices
    }

    package func write(to w: inout ByteWriter) {
        switch self {
        case .failure(let error):
            w.u8(Tag.failure.rawValue)
            w.u8(Self.number(of: error.code))
            w.u8(error.reason.map(Self.number(of:)) ?? 0)
            error.message.write(to: &w)
        case .answer(let answer):
            Self.write(answer, to: &w)
        }
    }

    private static func write(_ answer: AgentAnswer, to w: inout ByteWriter) {
        switch answer {
        case .done: w.u8(Tag.done.rawValue)
        case .hello(let home, let pid): w.u8(Tag.hello.rawValue); home.write(to: &w); pid.write(to: &w)
        case .item(let item): w.u8(Tag.item.rawValue); item.write(to: &w)
        // Through WireContainers.swift, specialized in this module.
        case .items(let items): w.u8(Tag.items.rawValue); w.array(items)
        case .status(let status): w.u8(Tag.status.rawValue); status.write(to: &w)
        case .settings(let settings): w.u8(Tag.settings.rawValue); settings.write(to: &w)
        case .count(let count): w.u8(Tag.count.rawValue); Int64(count).write(to: &w)
        case .bytes(let bytes): w.u8(Tag.bytes.rawValue); bytes.write(to: &w)
        case .tpmStatus(let status): w.u8(Tag.tpmStatus.rawValue); status.write(to: &w)
        case .enclaveKey(let key): w.u8(Tag.enclaveKey.rawValue); key.write(to: &w)
        case .provider(let pid): w.u8(Tag.provider.rawValue); pid.write(to: &w)
        case .grants(let grants): w.u8(Tag.grants.rawValue); w.array(grants)
        case .sshUses(let report): w.u8(Tag.sshUses.rawValue); report.write(to: &w)
        case .syncRound(let summary): w.u8(Tag.syncRound.rawValue); summary.write(to: &w)
        case .syncStatus(let summary): w.u8(Tag.syncStatus.rawValue); w.optional(summary)
        case .syncDevices(let devices): w.u8(Tag.syncDevices.rawValue); w.array(devices)
        }
    }

    package init(from r: inout ByteReader) throws(CodecError) {
        guard let tag = Tag(rawValue: try r.u8()) else { throw CodecError(.malformed, "an unknown answer") }
        switch tag {
        case .failure:
            let code = try Self.code(numbered: try r.u8())
            let reasonNumber = try r.u8()
            let reason = reasonNumber == 0 ? nil : try Self.reason(numbered: reasonNumber)
            self = .failure(StoreError(code, try String(from: &r), reason: reason))
        case .done: self = .answer(.done)
        case .hello: self = .answer(.hello(home: try String(from: &r), pid: try Int32(from: &r)))
        case .item: self = .answer(.item(try StoredItem(from: &r)))
        case .items: self = .answer(.items(try r.array(of: StoredItem.self)))
        case .status: self = .answer(.status(try KeychainStatus(from: &r)))
        case .settings: self = .answer(.settings(try LockSettings(from: &r)))
        case .count:
            guard let count = Int(exactly: try Int64(from: &r)), count >= 0 else { throw CodecError(.malformed, "a negative count") }
            self = .answer(.count(count))
        case .bytes: self = .answer(.bytes(try Data(from: &r)))
        case .tpmStatus: self = .answer(.tpmStatus(try TPMStatus(from: &r)))
        case .enclaveKey: self = .answer(.enclaveKey(try EnclaveKeyData(from: &r)))
        case .provider: self = .answer(.provider(pid: try Int32(from: &r)))
        case .grants: self = .answer(.grants(try r.array(of: ApplicationGrant.self)))
        case .sshUses: self = .answer(.sshUses(try SSHUseReport(from: &r)))
        case .syncRound: self = .answer(.syncRound(try SyncRoundSummary(from: &r)))
        case .syncStatus: self = .answer(.syncStatus(try r.optional(SyncStatusSummary.self)))
        case .syncDevices: self = .answer(.syncDevices(try r.array(of: SyncDeviceSummary.self)))
        }
    }

    /// The failure codes by number (1 up, in this order): append only, never reorder.
    package static let codes: [StoreError.Code] = [
        .invalidParameter, .noSuchAttribute, .noSuchClass, .duplicateItem, .itemNotFound,
        .missingEntitlement, .interactionNotAllowed, .notAvailable, .decode,
        .diskFull, .io, .readOnly, .invalidKeychain, .wrongVersion, .dataTooLarge,
        .internalError, .authFailed, .unimplemented, .noSuchKeychain, .duplicateKeychain,
        .unknownFormat, .unsupportedFormat, .passphraseRequired, .pkcs12VerifyFailure, .dataNotAvailable,
        .multiplePrivateKeys, .userCanceled, .lockedOut,
    ]

    /// The failure reasons by number (1 up; 0 is none): append only.
    package static let reasons: [StoreError.Reason] = [.keychainLocked, .agentRunning]

    private static func number(of code: StoreError.Code) -> UInt8 {
        // A code missing from the table is a bug that CodecTests catch; it travels as internalError.
        UInt8(truncatingIfNeeded: (codes.firstIndex(of: code) ?? codes.firstIndex(of: .internalError)!) + 1)
    }

    private static func number(of reason: StoreError.Reason) -> UInt8 {
        reasons.firstIndex(of: reason).map { UInt8(truncatingIfNeeded: $0 + 1) } ?? 0
    }

    private static func code(numbered number: UInt8) throws(CodecError) -> StoreError.Code {
        guard number >= 1, Int(number) <= codes.count else { throw CodecError(.malformed, "an unknown failure code") }
        return codes[Int(number) - 1]
    }

    private static func reason(numbered number: UInt8) throws(CodecError) -> StoreError.Reason {
        guard Int(number) <= reasons.count else { throw CodecError(.malformed, "an unknown failure reason") }
        return reasons[Int(number) - 1]
    }
}
