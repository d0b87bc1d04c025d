import KeychainStore
import KeyhavenAgentClient

/// Who may send a request. The agent checks it once, in ``AgentService/admit(_:_:)``, before any
/// handler runs; each item's access checks then run in the handler.
enum RequestSenders: Sendable {
    /// Any program of the user.
    case anyProgram
    /// The administrator programs (the keyhaven command, Keychain Access) and the agent's own
    /// process; any other is refused with `authFailed`, saying `refusal`.
    case administrators(refusal: String)
    /// keyhavend itself besides the administrator programs and the agent's own process.
    case agentOrAdministrators(refusal: String)
}

extension AgentRequest {
    /// Who may send this request (docs/threat-model.md).
    var senders: RequestSenders {
        switch self {
        case .backup:
            // A backup is a copy that no TPM and no access list guards (docs/tpm.md, "Backups").
            .administrators(refusal: "only the keyhaven command and Keychain Access may back up a keychain")
        case .shutdown:
            // Any program of the user can signal the agent; none but the administrator programs
            // stops it by asking (docs/threat-model.md, "The buses").
            .administrators(refusal: "only the keyhaven command and Keychain Access may stop the agent")
        case .sshUses:
            // Where the user's keys went is the user's to read.
            .administrators(refusal: "only the keyhaven command and Keychain Access may read or revoke the SSH agent's approvals")
        case .syncNow, .syncStatus, .syncDevices:
            // A round runs on the keychains the agent holds unlocked, and the status names the
            // account, the server and the user's devices: sync is the user's to run and read.
            .administrators(refusal: "only the keyhaven command and Keychain Access may ask the agent to sync or about sync")
        case .administer:
            // The keychain's password stands in for the item's access object.
            .administrators(refusal: "only the keyhaven programs may use an item with the keychain's password")
        case .provideSecretService:
            // The agent trusts the bus it joins to name its clients' processes.
            .agentOrAdministrators(refusal: "only keyhavend and the keyhaven command may ask the agent to provide the Secret Service")
        default:
            .anyProgram
        }
    }

    /// The keychain whose file the request makes, removes, backs up or reconfigures.
    var keychainFile: String? {
        switch self {
        case .create(let path, _), .deleteKeychain(let path), .changePassword(let path, _, _), .setSettings(let path, _),
             .backup(let path, _, _), .setBound(let path, _, _):
            path
        default:
            nil
        }
    }

    /// Whether the request may change what sync sees: the background sync's cue once it succeeds.
    var cuesSync: Bool {
        switch self {
        case .add, .update, .delete, .unlock, .administer, .setBound: true
        default: false
        }
    }

    /// The caller an item request acts as; its interaction flag says whether the agent may prompt.
    var caller: Caller? {
        switch self {
        case .add(_, _, let caller), .find(_, _, let caller, _, _), .update(_, _, _, let caller), .delete(_, _, let caller, _),
             .keyOperation(_, _, let caller):
            caller
        default:
            nil
        }
    }
}

extension AgentService {
    /// The checks every request passes before its handler runs: who sent it, and no file
    /// operation on the session keychain, which lives in the agent's memory alone.
    func admit(_ request: AgentRequest, _ context: RequestContext) throws(StoreError) {
        if let keychain = request.keychainFile, keychain == home.sessionKeychainPath {
            throw StoreError(.unimplemented, "the session keychain lives in the agent's memory: it has no file, password or settings")
        }
        switch request.senders {
        case .anyProgram:
            break
        case .administrators(let refusal):
            try context.requireAdministrator(refusal)
        case .agentOrAdministrators(let refusal):
            guard context.client == nil || context.isAdministrator || isThisAgentsProgram(context) else {
                throw StoreError(.authFailed, refusal)
            }
        }
    }

    /// Whether the client runs this agent's own executable (verified by path, untampered).
    private func isThisAgentsProgram(_ context: RequestContext) -> Bool {
        guard let identity = context.identity else { return false }
        return !identity.isTampered && identity.isPathVerified && identity.path == ApplicationIdentityReader.currentPath
    }
}
