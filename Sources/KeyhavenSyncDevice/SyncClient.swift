import AsyncHTTPClient
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore
import NIOCore
import NIOHTTP1

/// A device's calls to the sync server (docs/sync.md, "The server's API"), over AsyncHTTPClient.
/// Only https, or plain http to a loopback address, is accepted. Nothing the server answers is
/// trusted here: the caller verifies what it pulls (``LogState``).
package struct SyncClient: Sendable {
    /// The server's base URL, without a trailing slash.
    package let server: String
    let http: HTTPClient
    let timeout: TimeAmount

    /// The client sync uses unless told otherwise: for the life of the process (never shut down),
    /// and a connection that cannot be made fails the call at once (10 seconds at most) instead of
    /// being retried until the call's deadline: `sync now` says so, and the next round tries again.
    package static let defaultHTTP: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(10)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    package init(server: String, http: HTTPClient = SyncClient.defaultHTTP, timeout: TimeAmount = .seconds(60)) throws(SyncClientError) {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        guard Self.isAcceptable(base) else {
            throw SyncClientError(.insecureServer, "\(server): a sync server is https://HOST[:PORT], or http:// to a loopback address")
        }
        (self.server, self.http, self.timeout) = (base, http, timeout)
    }

    /// https, or http to 127.0.0.0/8, [::1] or localhost; no user, query or fragment.
    static func isAcceptable(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
              components.user == nil, components.query == nil, components.fragment == nil else { return false }
        switch components.scheme {
        case "https": return true
        case "http": return Loopback.contains(host)
        default: return false
        }
    }

    /// Creates the account whose first entry is `genesis`; its head.
    package func createAccount(_ genesis: LogEntry) async throws(SyncClientError) -> LogHead {
        try decode(LogHead.self, try await send("POST", "/v1/accounts", body: genesis.wireBytes))
    }

    /// Pushes `batch` (one device's entries continuing `batch.head`); the new head. A conflict
    /// (``SyncClientError/isConflict``) means the log moved on: pull, then push again.
    package func push(_ batch: LogBatch) async throws(SyncClientError) -> LogHead {
        guard let account = batch.entries.first?.account else { throw SyncClientError(.refused, "nothing to push") }
        return try decode(LogHead.self, try await send("POST", "/v1/accounts/\(account.hex)/entries", body: batch.wireBytes))
    }

    /// The entries after `sequence` and the server's head, waiting up to `wait` seconds for some.
    package func pull(_ account: AccountID, after sequence: UInt64, wait: Int = 0, as identity: DeviceIdentity) async throws(SyncClientError) -> LogBatch {
        let target = "/v1/accounts/\(account.hex)/entries?after=\(sequence)&wait=\(max(0, wait))"
        let signature = RequestSignature(method: "GET", target: target, body: [], by: identity)
        return try decode(LogBatch.self, try await send("GET", target, headers: signature.headers, extraTime: .seconds(Int64(wait))))
    }

    /// The account `identity`'s device is on (signed by it).
    package func account(of identity: DeviceIdentity) async throws(SyncClientError) -> AccountID {
        let target = "/v1/devices/\(identity.id.hex)/account"
        let signature = RequestSignature(method: "GET", target: target, body: [], by: identity)
        return try decode(AccountID.self, try await send("GET", target, headers: signature.headers))
    }

    /// Adds a message to one side of a pairing slot.
    package func postPairing(slot: [UInt8], side: Int, message: [UInt8]) async throws(SyncClientError) {
        _ = try await send("POST", "/v1/pairing/\(Hex.encode(slot))/\(side)", body: message)
    }

    /// The messages of one side of a pairing slot after number `after`, waiting up to `wait` seconds.
    package func pairingMessages(slot: [UInt8], side: Int, after: Int, wait: Int) async throws(SyncClientError) -> [[UInt8]] {
        let target = "/v1/pairing/\(Hex.encode(slot))/\(side)?after=\(after)&wait=\(max(0, wait))"
        return try decode(RelayMessages.self, try await send("GET", target, extraTime: .seconds(Int64(wait)))).messages
    }

    /// The server's health: true when it and its database answer.
    package func isHealthy() async -> Bool {
        (try? await send("GET", "/v1/health")) != nil
    }

    private func send(_ method: String, _ target: String, body: [UInt8]? = nil, headers: [(name: String, value: String)] = [],
                      extraTime: TimeAmount = .zero) async throws(SyncClientError) -> [UInt8] {
        var request = HTTPClientRequest(url: server + target)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request, timeout: timeout + extraTime)
            bytes = try await response.body.collect(upTo: 128 << 20)
        } catch {
            throw SyncClientError(.unreachable, "\(server) could not be reached (\(Self.reason(error)))")
        }
        guard (200..<300).contains(Int(response.status.code)) else {
            let text = String(String(buffer: bytes).prefix { $0 != "\n" })
            throw SyncClientError(.refused, "\(server) refused: \(text.prefix(200))", status: Int(response.status.code),
                                  serverCode: response.headers.first(name: "Keyhaven-Error"))
        }
        return Array(buffer: bytes)
    }

    private func decode<T: WireCodable>(_ type: T.Type, _ bytes: [UInt8]) throws(SyncClientError) -> T {
        do {
            return try T(wireBytes: bytes)
        } catch {
            throw SyncClientError(.malformedAnswer, "\(server) answered with a malformed \(T.self): \(error.message)")
        }
    }

    /// A short reason for a transport failure (AsyncHTTPClient's errors describe themselves).
    private static func reason(_ error: any Error) -> String {
        String(String(describing: error).prefix(160))
    }
}
