import FoundationEssentials
import KeychainModel

extension AgentRequest: WireCodable {
    /// The u8 tag of each request (docs/agent-protocol.md); never reuse one.
    private enum Tag: UInt8 {
        case hello = 1, create, deleteKeychain, unlock, lock, status, changePassword, settings, setSettings
        case add, find, update, delete, backup, shutdown, keyOperation, setAccess, grants, echo, provideSecretService, administer, tpmStatus
        case createEnclaveKey, enclaveKeyOperation, setBound, serveSSHAgent, sshUses, syncNow, syncStatus, syncDevices
    }

    /// The request's tag on the wire: the first byte of its body.
    package var tag: UInt8 {
        let tag: Tag
        switch self {
        case .hello: tag = .hello
        case .create: tag = .create
        case .deleteKeychain: tag = .deleteKeychain
        case .unlock: tag = .unlock
        case .lock: tag = .lock
        case .status: tag = .status
        case .changePassword: tag = .changePassword
        case .settings: tag = .settings
        case .setSettings: tag = .setSettings
        case .add: tag = .add
        case .find: tag = .find
        case .update: tag = .update
        case .delete: tag = .delete
        case .backup: tag = .backup
        case .shutdown: tag = .shutdown
        case .keyOperation: tag = .keyOperation
        case .setAccess: tag = .setAccess
        case .grants: tag = .grants
        case .echo: tag = .echo
        case .provideSecretService: tag = .provideSecretService
        case .administer: tag = .administer
        case .tpmStatus: tag = .tpmStatus
        case .createEnclaveKey: tag = .createEnclaveKey
        case .enclaveKeyOperation: tag = .enclaveKeyOperation
        case .setBound: tag = .setBound
        case .serveSSHAgent: tag = .serveSSHAgent
        case .sshUses: tag = .sshUses
        case .syncNow: tag = .syncNow
        case .syncStatus: tag = .syncStatus
        case .syncDevices: tag = .syncDevices
        }
        return tag.rawValue
    }

    package func write(to w: inout ByteWriter) {
        w.u8(tag)
        switch self {
        case .hello, .shutdown, .tpmStatus, .createEnclaveKey, .syncNow, .syncDevices:
            break
        case .enclaveKeyOperation(let key, let request):
            key.write(to: &w); request.write(to: &w)
        case .setBound(let keychain, let password, let bound):
            keychain.write(to: &w); w.optional(password); bound.write(to: &w)
        case .create(let keychain, let password):
            keychain.write(to: &w); w.optional(password)
        case .deleteKeychain(let keychain):
            keychain.write(to: &w)
        case .unlock(let keychain, let password):
            keychain.write(to: &w); password.write(to: &w)
        case .lock(let keychain):
            w.optional(keychain)
        case .status(let keychain):
            keychain.write(to: &w)
        case .changePassword(let keychain, let old, let new):
            keychain.write(to: &w); old.write(to: &w); new.write(to: &w)
        case .settings(let keychain):
            keychain.write(to: &w)
        case .setSettings(let keychain, let settings):
            keychain.write(to: &w); settings.write(to: &w)
        case .add(let keychain, let item, let caller):
            keychain.write(to: &w); item.write(to: &w); caller.write(to: &w)
        case .find(let keychains, let query, let caller, let withSecrets, let withAttributes):
            w.array(keychains); query.write(to: &w); caller.write(to: &w); withSecrets.write(to: &w); withAttributes.write(to: &w)
        case .update(let keychains, let query, let changes, let caller):
            w.array(keychains); query.write(to: &w); changes.write(to: &w); caller.write(to: &w)
        case .delete(let keychains, let query, let caller, let makeTombstones):
            w.array(keychains); query.write(to: &w); caller.write(to: &w); makeTombstones.write(to: &w)
        case .backup(let keychain, let destination, let password):
            keychain.write(to: &w); destination.write(to: &w); password.write(to: &w)
        case .keyOperation(let keychains, let request, let caller):
            w.array(keychains); request.write(to: &w); caller.write(to: &w)
        case .setAccess(let keychains, let query, let change, let password):
            w.array(keychains); query.write(to: &w); change.write(to: &w); w.optional(password)
        case .grants(let change, let password):
            w.optional(change); w.optional(password)
        case .echo(let data):
            data.write(to: &w)
        case .provideSecretService(let busAddress):
            w.optional(busAddress)
        case .serveSSHAgent(let defaultLifetime, let keychain, let approvalMinutes):
            w.optional(defaultLifetime.map(Int64.init)); w.optional(keychain); Int64(approvalMinutes).write(to: &w)
        case .sshUses(let revoke):
            w.optional(revoke)
        case .syncStatus(let staleAfter):
            staleAfter.write(to: &w)
        case .administer(let keychain, let reference, let password, let action):
            keychain.write(to: &w); reference.write(to: &w); w.optional(password); action.write(to: &w)
        }
    }

    package init(from r: inout ByteReader) throws(CodecError) {
        guard let tag = Tag(rawValue: try r.u8()) else { throw CodecError(.malformed, "an unknown request") }
        switch tag {
        case .hello: self = .hello
        case .create: self = .create(keychain: try String(from: &r), password: try r.optional(Data.self))
        case .deleteKeychain: self = .deleteKeychain(keychain: try String(from: &r))
        case .unlock: self = .unlock(keychain: try String(from: &r), password: try Data(from: &r))
        case .lock: self = .lock(keychain: try r.optional(String.self))
        case .status: self = .status(keychain: try String(from: &r))
        case .changePassword: self = .changePassword(keychain: try String(from: &r), old: try Data(from: &r), new: try Data(from: &r))
        case .settings: self = .settings(keychain: try String(from: &r))
        case .setSettings: self = .setSettings(keychain: try String(from: &r), settings: try LockSettings(from: &r))
        case .add: self = .add(keychain: try String(from: &r), item: try NewItem(from: &r), caller: try Caller(from: &r))
        case .find:
            self = .find(keychains: try r.array(of: String.self), query: try ItemQuery(from: &r), caller: try Caller(from: &r),
                         withSecrets: try Bool(from: &r), withAttributes: try Bool(from: &r))
        case .update:
            self = .update(keychains: try r.array(of: String.self), query: try ItemQuery(from: &r), changes: try ItemChanges(from: &r),
                           caller: try Caller(from: &r))
        case .delete:
            self = .delete(keychains: try r.array(of: String.self), query: try ItemQuery(from: &r), caller: try Caller(from: &r),
                           makeTombstones: try Bool(from: &r))
        case .backup: self = .backup(keychain: try String(from: &r), destination: try String(from: &r), password: try Data(from: &r))
        case .shutdown: self = .shutdown
        case .keyOperation:
            self = .keyOperation(keychains: try r.array(of: String.self), request: try KeyOperationRequest(from: &r), caller: try Caller(from: &r))
        case .setAccess:
            self = .setAccess(keychains: try r.array(of: String.self), query: try ItemQuery(from: &r), change: try AccessChange(from: &r),
                              password: try r.optional(Data.self))
        case .grants: self = .grants(change: try r.optional(GrantChange.self), password: try r.optional(Data.self))
        case .echo: self = .echo(data: try Data(from: &r))
        case .provideSecretService: self = .provideSecretService(busAddress: try r.optional(String.self))
        case .tpmStatus: self = .tpmStatus
        case .createEnclaveKey: self = .createEnclaveKey
        case .enclaveKeyOperation: self = .enclaveKeyOperation(key: try EnclaveKeyData(from: &r), request: try KeyOperationRequest(from: &r))
        case .setBound: self = .setBound(keychain: try String(from: &r), password: try r.optional(Data.self), bound: try Bool(from: &r))
        case .serveSSHAgent:
            let lifetime = try r.optional(Int64.self)
            guard lifetime.map({ UInt32(exactly: $0) != nil }) ?? true else { throw CodecError(.malformed, "a lifetime out of range") }
            let keychain = try r.optional(String.self)
            guard let minutes = UInt32(exactly: try Int64(from: &r)) else { throw CodecError(.malformed, "minutes out of range") }
            self = .serveSSHAgent(defaultLifetime: lifetime.map { UInt32($0) }, keychain: keychain, approvalMinutes: minutes)
        case .sshUses: self = .sshUses(revoke: try r.optional(SSHRevocation.self))
        case .syncNow: self = .syncNow
        case .syncStatus: self = .syncStatus(staleAfter: try UInt64(from: &r))
        case .syncDevices: self = .syncDevices
        case .administer:
            self = .administer(keychain: try String(from: &r), reference: try PersistentReference(from: &r), password: try r.optional(Data.self),
                               action: try ItemAdministration(from: &r))
        }
    }
}
