import FoundationEssentials
import KeychainModel

/// A request to the agent (docs/agent-protocol.md). Keychains are absolute paths. Each succeeds
/// with one ``AgentAnswer`` case, the one that case's comment names (docs/agent-protocol.md's
/// table lists them all).
package enum AgentRequest: Sendable {
    case hello
    case create(keychain: String, password: Data?)
    case deleteKeychain(keychain: String)
    case unlock(keychain: String, password: Data)
    /// nil: every keychain the agent has open.
    case lock(keychain: String?)
    case status(keychain: String)
    case changePassword(keychain: String, old: Data, new: Data)
    case settings(keychain: String)
    case setSettings(keychain: String, settings: LockSettings)
    case add(keychain: String, item: NewItem, caller: Caller)
    /// `withAttributes` false: the answer's password items carry no attributes and no access
    /// object, as the client needs only their secrets (a look-up that returns its data alone).
    case find(keychains: [String], query: ItemQuery, caller: Caller, withSecrets: Bool, withAttributes: Bool = true)
    case update(keychains: [String], query: ItemQuery, changes: ItemChanges, caller: Caller)
    case delete(keychains: [String], query: ItemQuery, caller: Caller, makeTombstones: Bool)
    /// Writes a backup of the keychain to `destination`, given its password (checked by the TPM
    /// for a bound keychain). Only the administrator programs may send it.
    case backup(keychain: String, destination: String, password: Data)
    case shutdown
    /// An operation with a stored key, found in the first of `keychains` that has it.
    case keyOperation(keychains: [String], request: KeyOperationRequest, caller: Caller)
    /// Changes the access objects of the items matching `query` (`keyhaven access grant|revoke`),
    /// with the keychain's password when it has one. Answers the count changed.
    case setAccess(keychains: [String], query: ItemQuery, change: AccessChange, password: Data?)
    /// Lists the access groups granted to applications (`change` nil) or changes them, with the
    /// default keychain's password when it has one. Answers the grants.
    case grants(change: GrantChange?, password: Data?)
    /// Answers its bytes back at once, touching no keychain: the floor of a request through the
    /// agent (the socket round trip and the framing), which `keyhaven-agent-bench` measures.
    case echo(data: Data)
    /// Provide the Secret Service on the session bus at `busAddress` (nil: the agent's own), for
    /// as long as this connection stays open (`keyhavend --secret-service` handing over to the
    /// running agent). Only keyhavend and the administrator programs may ask. Answers the pid.
    case provideSecretService(busAddress: String?)
    /// Keychain Access's use of one item (``ItemAdministration``), authorized by the keychain's
    /// password when it has one instead of by the item's access object. Only the administrator
    /// programs may send it. Answers the item (with its secret for `reveal`; `done` for `delete`).
    case administer(keychain: String, reference: PersistentReference, password: Data?, action: ItemAdministration)
    /// The TPM the agent reaches and its dictionary-attack state (`keyhaven tpm status`).
    /// Answers a ``TPMStatus``.
    case tpmStatus
    /// Makes a Secure Enclave key inside the TPM and stores nothing: answers its
    /// ``EnclaveKeyData``, which the client adds to a keychain as a key item or keeps.
    case createEnclaveKey
    /// An operation with a Secure Enclave key held by no keychain (`kSecAttrIsPermanent` false),
    /// given its data. `request.reference` is not read. Answers the result's bytes.
    case enclaveKeyOperation(key: EnclaveKeyData, request: KeyOperationRequest)
    /// Binds the keychain to the TPM (`bound`) or frees it, with its password when it has one
    /// (`keyhaven set-keychain-settings --tpm|--no-tpm`, `create-keychain --tpm`).
    case setBound(keychain: String, password: Data?, bound: Bool)
    /// Serve SSH agent connections that `keyhaven-ssh-agent` hands over on this connection, with
    /// a keyring that lasts as long as it (keys added without a lifetime get `defaultLifetime`
    /// seconds, when set) and, when `keychain` names one, the SSH keys kept in that keychain. A
    /// confirming key's prompt offers to approve a host or an SSHSIG namespace for
    /// `approvalMinutes` (none when 0). After the `done` answer the connection carries no more
    /// frames: each byte sent on it is
    /// ``SSHHandover`` (a client's socket attached, or a signal's request).
    case serveSSHAgent(defaultLifetime: UInt32?, keychain: String?, approvalMinutes: UInt32)
    /// The SSH agent's standing approvals and its keys' last uses, after revoking what `revoke`
    /// names. The administrator programs only (`keyhaven ssh approvals`, Keychain Access).
    case sshUses(revoke: SSHRevocation?)
    /// A sync round now, by the agent's background sync on the keychain it holds (`keyhaven sync
    /// now`: no password asked again). The administrator programs only. Answers a
    /// ``SyncRoundSummary``.
    case syncNow
    /// Where the home is in sync (`keyhaven sync status`), warning of the devices not heard from
    /// for more than `staleAfter` seconds. The administrator programs only. Answers a
    /// ``SyncStatusSummary``, nil when the home does not sync.
    case syncStatus(staleAfter: UInt64)
    /// The devices on the home's sync account (`keyhaven sync devices`). The administrator programs
    /// only. Answers ``SyncDeviceSummary``s, in the order they were added.
    case syncDevices
}

/// What `keyhaven-ssh-agent` sends after ``AgentRequest/serveSSHAgent(defaultLifetime:keychain:approvalMinutes:)``: one
/// byte each, over the same connection.
package enum SSHHandover: UInt8, Sendable {
    /// A client's connection, attached (SCM_RIGHTS): the agent serves it.
    case connection = 0x43  // "C"
    /// Forget every key (SIGUSR1, as OpenSSH's agent forgets them).
    case removeAllKeys = 0x44  // "D"
}
