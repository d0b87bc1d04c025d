import FoundationEssentials
import KeychainModel

/// A request to the agent (docs/agent-protocol.md). Keychains are absolute paths.
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
    /// Answers `data` back at once, touching no keychain: the floor of a request through the
    /// agent (the socket round trip and the framing), which `keyhaven-agent-bench` measures.
    case echo(data: Data)
    /// Provide the Secret Service on the session bus at `busAddress` (nil: the agent's own), for
    /// as long as this connection stays open (`keyhavend --secret-service` handing over to the
    /// running agent). Only keyhavend and the administrator programs may ask. Answers the pid.
    case provideSecretService(busAddress: String?)
    /// Keychain Access's use of one item (``ItemAdministration``), authorized by the keychain's
    /// password when it has one instead of by the item's access object. Only the administrator
    /// programs may send it. Answers the item (with its secret for `reveal`; none for `delete`).
    case administer(keychain: String, reference: PersistentReference, password: Data?, action: ItemAdministration)
    /// The TPM the agent reaches and its dictionary-attack state (`keyhaven tpm status`).
    /// Answers a ``TPMStatus`` in `data`.
    case tpmStatus
    /// Makes a Secure Enclave key inside the TPM and stores nothing: answers its
    /// ``EnclaveKeyData`` in `data`, which the client adds to a keychain as a key item or keeps.
    case createEnclaveKey
    /// An operation with a Secure Enclave key held by no keychain (`kSecAttrIsPermanent` false),
    /// given its data. `request.reference` is not read. Answers the result in `data`.
    case enclaveKeyOperation(key: EnclaveKeyData, request: KeyOperationRequest)
    /// Binds the keychain to the TPM (`bound`) or frees it, with its password when it has one
    /// (`keyhaven set-keychain-settings --tpm|--no-tpm`, `create-keychain --tpm`).
    case setBound(keychain: String, password: Data?, bound: Bool)
    /// Serve SSH agent connections that `keyhaven-ssh-agent` hands over on this connection, with
    /// a keyring that lasts as long as it (keys added without a lifetime get `defaultLifetime`
    /// seconds, when set) and, when `keychain` names one, the SSH keys kept in that keychain. A
    /// confirming key's prompt offers to approve a host or an SSHSIG namespace for
    /// `approvalMinutes` (none when 0). After the success answer the connection carries no more frames: each byte sent on it is
    /// ``SSHHandover`` (a client's socket attached, or a signal's request).
    case serveSSHAgent(defaultLifetime: UInt32?, keychain: String?, approvalMinutes: UInt32)
    /// The SSH agent's standing approvals and its keys' last uses, after revoking what `revoke`
    /// names. The administrator programs only (`keyhaven ssh approvals`, Keychain Access).
    case sshUses(revoke: SSHRevocation?)
}

/// What `keyhaven-ssh-agent` sends after ``AgentRequest/serveSSHAgent(defaultLifetime:keychain:approvalMinutes:)``: one
/// byte each, over the same connection.
package enum SSHHandover: UInt8, Sendable {
    /// A client's connection, attached (SCM_RIGHTS): the agent serves it.
    case connection = 0x43  // "C"
    /// Forget every key (SIGUSR1, as OpenSSH's agent forgets them).
    case removeAllKeys = 0x44  // "D"
}

/// A change of items' access objects.
package struct AccessChange: Sendable {
    /// Programs to trust, by path (the agent hashes them).
    package var trust: [String] = []
    /// Programs to trust no more, by path (entries of that path or of that file's digest).
    package var untrust: [String] = []
    /// Open the items to every application (true) or close them to the listed ones (false).
    package var anyApplication: Bool?

    package init(trust: [String] = [], untrust: [String] = [], anyApplication: Bool? = nil) {
        self.trust = trust
        self.untrust = untrust
        self.anyApplication = anyApplication
    }
}

/// A change of the groups granted to one application.
package struct GrantChange: Sendable {
    package var application: String
    package var groups: [String]
    package var revoke: Bool

    package init(application: String, groups: [String], revoke: Bool) {
        self.application = application
        self.groups = groups
        self.revoke = revoke
    }
}

/// The access groups granted to one application.
package struct ApplicationGrant: Sendable, Equatable {
    package var application: TrustedApplication
    package var groups: [String]

    package init(application: TrustedApplication, groups: [String]) {
        self.application = application
        self.groups = groups
    }
}

extension AccessChange: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.array(trust)
        writer.array(untrust)
        writer.optional(anyApplication)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(trust: try reader.array(of: String.self), untrust: try reader.array(of: String.self),
                  anyApplication: try reader.optional(Bool.self))
    }
}

extension GrantChange: WireCodable {
    package func write(to writer: inout ByteWriter) {
        application.write(to: &writer)
        writer.array(groups)
        revoke.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(application: try String(from: &reader), groups: try reader.array(of: String.self), revoke: try Bool(from: &reader))
    }
}

extension ApplicationGrant: WireCodable {
    package func write(to writer: inout ByteWriter) {
        application.write(to: &writer)
        writer.array(groups)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(application: try TrustedApplication(from: &reader), groups: try reader.array(of: String.self))
    }
}

/// The agent's answer: an error, or the result fields the request has.
package struct AgentResponse: Sendable {
    package struct Failure: Sendable, Equatable {
        package let code: String
        package let message: String
    }

    package var failure: Failure?
    package var items: [StoredItem]?
    package var status: KeychainStatus?
    package var settings: LockSettings?
    package var count: Int?
    /// `hello`: the agent's keychain home and process id.
    package var home: String?
    package var pid: Int32?
    /// `keyOperation`: the result's bytes.
    package var data: Data?
    /// `grants`: the access groups granted to applications.
    package var grants: [ApplicationGrant]?
    /// `sshUses`: the SSH agent's approvals and last uses.
    package var sshUses: SSHUseReport?

    package init() {}

    package init(error: StoreError) {
        failure = Failure(code: error.code.description, message: error.message)
    }

    /// The error the response carries, if any.
    package var error: StoreError? {
        failure.map { StoreError(StoreError.Code(name: $0.code) ?? .internalError, $0.message) }
    }
}

extension AgentRequest: WireCodable {
    /// The u8 tag of each request (docs/agent-protocol.md); never reuse one.
    private enum Tag: UInt8 {
        case hello = 1, create, deleteKeychain, unlock, lock, status, changePassword, settings, setSettings
        case add, find, update, delete, backup, shutdown, keyOperation, setAccess, grants, echo, provideSecretService, administer, tpmStatus
        case createEnclaveKey, enclaveKeyOperation, setBound, serveSSHAgent, sshUses
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
        }
        return tag.rawValue
    }

    package func write(to w: inout ByteWriter) {
        w.u8(tag)
        switch self {
        case .hello, .shutdown, .tpmStatus, .createEnclaveKey:
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
        case .administer:
            self = .administer(keychain: try String(from: &r), reference: try PersistentReference(from: &r), password: try r.optional(Data.self),
                               action: try ItemAdministration(from: &r))
        }
    }
}

extension AgentResponse.Failure: WireCodable {
    package func write(to writer: inout ByteWriter) {
        code.write(to: &writer)
        message.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(code: try String(from: &reader), message: try String(from: &reader))
    }
}

/// Every field as an optional, in this order.
extension AgentResponse: WireCodable {
    package func write(to writer: inout ByteWriter) {
        // Optional and array fields through WireContainers.swift, specialized in this module.
        writer.optional(failure)
        writer.optionalArray(items)
        writer.optional(status)
        writer.optional(settings)
        writer.optional(count.map { Int64($0) })
        writer.optional(home)
        writer.optional(pid)
        writer.optional(data)
        writer.optionalArray(grants)
        writer.optional(sshUses)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init()
        failure = try reader.optional(Failure.self)
        items = try reader.optionalArray(of: StoredItem.self)
        status = try reader.optional(KeychainStatus.self)
        settings = try reader.optional(LockSettings.self)
        count = try reader.optional(Int64.self).map { Int(clamping: $0) }
        home = try reader.optional(String.self)
        pid = try reader.optional(Int32.self)
        data = try reader.optional(Data.self)
        grants = try reader.optionalArray(of: ApplicationGrant.self)
        sshUses = try reader.optional(SSHUseReport.self)
    }
}

/// The frame format: a 4-byte big-endian length, then that many bytes: the protocol version
/// (one byte), the keychain home the sender means (optional text), and the body.
package enum AgentFraming {
    package static let version: UInt8 = 9
    /// The largest answer a client accepts (many items at once); a larger length ends the connection.
    package static let maximumFrame = 48 << 20
    /// The largest request the agent accepts: one item's largest secret (16 MiB) and attributes.
    /// A larger length ends that client's connection before its bytes are read.
    package static let maximumRequest = 20 << 20
    /// The most clients the agent serves at once; more are closed at once. With one request
    /// read at a time per client, the agent never buffers more than this many requests.
    package static let maximumConnections = 64
    /// The most bytes an `echo` carries back.
    package static let maximumEcho = 64 << 10

    /// A whole frame, length first. `home`, in requests: the keychain home the client means; an
    /// agent serving another one refuses the request, so the client needs no `hello` first.
    package static func encode(_ body: some WireCodable, home: String? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        writer.raw([0, 0, 0, 0, version])
        writer.optional(home)
        body.write(to: &writer)
        // Taken, not copied: a frame can hold a secret, and its one copy is what the caller wipes.
        var bytes = writer.takeBytes()
        let length = UInt32(bytes.count - 4)
        for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (8 * (3 - i))) }
        return bytes
    }

    /// A frame's body (the bytes after the length).
    package static func decode<Body: WireCodable>(_ type: Body.Type, from payload: [UInt8]) throws(StoreError) -> Body {
        try decodeWithHome(type, from: payload).body
    }

    /// A frame's body and the home the sender named, if any. Another version is `.wrongVersion`;
    /// anything malformed, truncated or followed by extra bytes is `.decode`.
    package static func decodeWithHome<Body: WireCodable>(_ type: Body.Type, from payload: [UInt8]) throws(StoreError) -> (body: Body, home: String?) {
        var reader = ByteReader(payload)
        guard let sent = try? reader.u8() else { throw StoreError(.decode, "an empty agent message") }
        guard sent == version else {
            throw StoreError(.wrongVersion, "the other side speaks agent protocol \(sent == UInt8(ascii: "{") ? 1 : Int(sent)), not \(version)")
        }
        let home: String?
        let body: Body
        do throws(CodecError) {
            home = try reader.optional(String.self)
            body = try Body(from: &reader)
        } catch {
            throw StoreError(.decode, "a malformed agent message (\(error.message))")
        }
        guard reader.remaining == 0 else { throw StoreError(.decode, "a malformed agent message (trailing bytes)") }
        return (body, home)
    }
}
