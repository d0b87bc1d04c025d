import FoundationEssentials
import KeychainModel

/// A request to the agent (docs/agent-protocol.md). Keychains are absolute paths.
package enum AgentRequest: Codable, Sendable {
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
    case find(keychains: [String], query: ItemQuery, caller: Caller, withSecrets: Bool)
    case update(keychains: [String], query: ItemQuery, changes: ItemChanges, caller: Caller)
    case delete(keychains: [String], query: ItemQuery, caller: Caller, makeTombstones: Bool)
    case backup(keychain: String, destination: String)
    case shutdown
}

/// The agent's answer: an error, or the result fields the request has.
package struct AgentResponse: Codable, Sendable {
    package struct Failure: Codable, Sendable, Equatable {
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

    package init() {}

    package init(error: StoreError) {
        failure = Failure(code: error.code.description, message: error.message)
    }

    /// The error the response carries, if any.
    package var error: StoreError? {
        failure.map { StoreError(StoreError.Code(name: $0.code) ?? .internalError, $0.message) }
    }
}

/// The frame format: a 4-byte big-endian length, then that many bytes of JSON
/// `{"v": 1, "body": ...}`.
package enum AgentFraming {
    package static let version = 1
    /// The largest frame either side accepts; a larger length ends the connection.
    package static let maximumFrame = 48 << 20

    /// `home`, in requests: the keychain home the client means; an agent serving another one
    /// refuses the request, so the client needs no separate `hello` first.
    private struct Envelope<Body: Codable>: Codable {
        let v: Int
        var home: String?
        let body: Body
    }

    package static func encode<Body: Codable>(_ body: Body, home: String? = nil) throws(StoreError) -> [UInt8] {
        let json: Data
        do { json = try JSONEncoder().encode(Envelope(v: version, home: home, body: body)) } catch {
            throw StoreError(.internalError, "cannot encode an agent message")
        }
        let length = UInt32(json.count)
        return [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + json
    }

    package static func decode<Body: Codable>(_ type: Body.Type, from json: some DataProtocol) throws(StoreError) -> Body {
        try decodeWithHome(type, from: json).body
    }

    /// The body and the home the sender named, if any.
    package static func decodeWithHome<Body: Codable>(_ type: Body.Type, from json: some DataProtocol) throws(StoreError) -> (body: Body, home: String?) {
        let envelope: Envelope<Body>
        do { envelope = try JSONDecoder().decode(Envelope<Body>.self, from: Data(json)) } catch {
            throw StoreError(.decode, "a malformed agent message")
        }
        guard envelope.v == version else { throw StoreError(.wrongVersion, "the agent speaks protocol version \(envelope.v), not \(version)") }
        return (envelope.body, envelope.home)
    }
}
