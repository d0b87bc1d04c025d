import FoundationEssentials
import KeychainModel

/// What a request that succeeded answers: each case carries exactly its result
/// (docs/agent-protocol.md, "Answers").
package enum AgentAnswer: Sendable {
    /// The request is done and has nothing to say (`create`, `unlock`, `lock`, `setSettings`, ...).
    case done
    /// `hello`: the keychain home the agent serves and its process id.
    case hello(home: String, pid: Int32)
    /// `add`: the new item; `administer`: the item (with its secret for a reveal).
    case item(StoredItem)
    /// `find`: the items found, in the order found.
    case items([StoredItem])
    /// `status`.
    case status(KeychainStatus)
    /// `settings`.
    case settings(LockSettings)
    /// `update`, `delete`, `setAccess`: how many items changed.
    case count(Int)
    /// `keyOperation`, `enclaveKeyOperation`: the result's bytes; `echo`: the bytes sent.
    case bytes(Data)
    /// `tpmStatus`.
    case tpmStatus(TPMStatus)
    /// `createEnclaveKey`: the new key, stored nowhere.
    case enclaveKey(EnclaveKeyData)
    /// `provideSecretService`: the process id of the agent that provides it.
    case provider(pid: Int32)
    /// `grants`: the access groups granted to applications.
    case grants([ApplicationGrant])
    /// `sshUses`: the SSH agent's approvals and its keys' last uses.
    case sshUses(SSHUseReport)
    /// `syncNow`: what the round did.
    case syncRound(SyncRoundSummary)
    /// `syncStatus`: where the home is in sync; nil when it does not sync.
    case syncStatus(SyncStatusSummary?)
    /// `syncDevices`: the account's devices.
    case syncDevices([SyncDeviceSummary])

    /// The case's name, as errors say it.
    package var kind: String {
        switch self {
        case .done: "done"
        case .hello: "hello"
        case .item: "item"
        case .items: "items"
        case .status: "status"
        case .settings: "settings"
        case .count: "count"
        case .bytes: "bytes"
        case .tpmStatus: "tpmStatus"
        case .enclaveKey: "enclaveKey"
        case .provider: "provider"
        case .grants: "grants"
        case .sshUses: "sshUses"
        case .syncRound: "syncRound"
        case .syncStatus: "syncStatus"
        case .syncDevices: "syncDevices"
        }
    }
}

/// The result a request's answer must carry: another case is an agent out of step with its
/// client, thrown as `.decode` and never read as an empty result.
extension AgentAnswer {
    package func hello() throws(StoreError) -> (home: String, pid: Int32) {
        guard case .hello(let home, let pid) = self else { throw mismatch("hello") }
        return (home, pid)
    }

    package func item() throws(StoreError) -> StoredItem {
        guard case .item(let item) = self else { throw mismatch("item") }
        return item
    }

    package func items() throws(StoreError) -> [StoredItem] {
        guard case .items(let items) = self else { throw mismatch("items") }
        return items
    }

    package func status() throws(StoreError) -> KeychainStatus {
        guard case .status(let status) = self else { throw mismatch("status") }
        return status
    }

    package func settings() throws(StoreError) -> LockSettings {
        guard case .settings(let settings) = self else { throw mismatch("settings") }
        return settings
    }

    package func count() throws(StoreError) -> Int {
        guard case .count(let count) = self else { throw mismatch("count") }
        return count
    }

    package func bytes() throws(StoreError) -> Data {
        guard case .bytes(let bytes) = self else { throw mismatch("bytes") }
        return bytes
    }

    package func tpmStatus() throws(StoreError) -> TPMStatus {
        guard case .tpmStatus(let status) = self else { throw mismatch("tpmStatus") }
        return status
    }

    package func enclaveKey() throws(StoreError) -> EnclaveKeyData {
        guard case .enclaveKey(let key) = self else { throw mismatch("enclaveKey") }
        return key
    }

    package func provider() throws(StoreError) -> Int32 {
        guard case .provider(let pid) = self else { throw mismatch("provider") }
        return pid
    }

    package func grants() throws(StoreError) -> [ApplicationGrant] {
        guard case .grants(let grants) = self else { throw mismatch("grants") }
        return grants
    }

    package func sshUses() throws(StoreError) -> SSHUseReport {
        guard case .sshUses(let report) = self else { throw mismatch("sshUses") }
        return report
    }

    package func syncRound() throws(StoreError) -> SyncRoundSummary {
        guard case .syncRound(let summary) = self else { throw mismatch("syncRound") }
        return summary
    }

    package func syncStatus() throws(StoreError) -> SyncStatusSummary? {
        guard case .syncStatus(let summary) = self else { throw mismatch("syncStatus") }
        return summary
    }

    package func syncDevices() throws(StoreError) -> [SyncDeviceSummary] {
        guard case .syncDevices(let devices) = self else { throw mismatch("syncDevices") }
        return devices
    }

    private func mismatch(_ expected: String) -> StoreError {
        StoreError(.decode, "the agent answered \(kind) where \(expected) was due")
    }
}
