import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import KeychainModel
import KeychainTestSupport
import KeyhavenSyncCore
import NIOCore
import NIOHTTP1
import Synchronization

/// A test-only hostile server: an HTTP proxy between devices and a real `keyhaven-sync-server`,
/// whose moves a test scripts. It forwards every request, and can rewrite the log a pull answers
/// with (drop, reorder, replay, forge, roll back), the pairing messages it relays, and where it
/// forwards (a second server on a copy of the database: a fork). It holds no key of any device:
/// what it forges it signs with keys of its own, as a compromised server would.
final class HostileProxy: Sendable {
    /// What the proxy does to the traffic; changed by the test between steps.
    struct Moves: Sendable {
        /// Where entries go (the real server, or a fork of it).
        var upstream: String
        /// Where pairing messages go (stays with the real server when entries go to a fork).
        var pairingUpstream: String
        /// Rewrites a pull's answer (the account pulled, the batch the server answered).
        var pull: (@Sendable (AccountID, LogBatch) -> LogBatch)?
        /// Rewrites a pairing message posted by a side (0 the inviting device, 1 the joiner).
        var relay: (@Sendable (Int, [UInt8]) -> [UInt8])?
    }

    final class Box: Sendable {
        let moves: Mutex<Moves>
        init(_ moves: Moves) { self.moves = Mutex(moves) }
    }

    private let box: Box
    private let task: Task<Void, any Error>
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }

    init(upstream: String) async throws {
        let box = Box(Moves(upstream: upstream, pairingUpstream: upstream))
        let ready = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in try await Self.forward(request, box: box) }
        let app = Application(responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
                              onServerRunning: { channel in ready.continuation.yield(channel.localAddress?.port ?? 0) })
        // On a thread of its own: the tests' waits for `keyhaven` hold the cooperative pool's.
        task = Task(executorPreference: DedicatedExecutor.shared) { try await app.runService() }
        var port = 0
        for await announced in ready.stream {
            port = announced
            break
        }
        (self.box, self.port) = (box, port)
    }

    func stop() { task.cancel() }

    deinit { task.cancel() }

    /// The pulls' answers rewritten by `move` from now on (nil: as the server says).
    func onPull(_ move: (@Sendable (AccountID, LogBatch) -> LogBatch)?) { box.moves.withLock { $0.pull = move } }

    /// Pairing messages posted by a side rewritten by `move` from now on.
    func onRelay(_ move: (@Sendable (Int, [UInt8]) -> [UInt8])?) { box.moves.withLock { $0.relay = move } }

    /// Entries (and, unless told apart, pairing messages) forwarded to `upstream` from now on.
    func forward(to upstream: String, pairing: String? = nil) {
        box.moves.withLock {
            $0.upstream = upstream
            $0.pairingUpstream = pairing ?? upstream
        }
    }

    private static func forward(_ request: Request, box: Box) async throws -> Response {
        let current = box.moves.withLock { $0 }
        let path = request.uri.path
        let isPairing = path.hasPrefix("/v1/pairing/")
        var body = Array(buffer: try await request.body.collect(upTo: 64 << 20))
        if isPairing, request.method == .post, let relay = current.relay, let side = Int(path.split(separator: "/").last ?? "") {
            body = relay(side, body)
        }
        var outgoing = HTTPClientRequest(url: (isPairing ? current.pairingUpstream : current.upstream) + request.uri.description)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where field.name != .contentLength {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        if request.method != .get { outgoing.body = HTTPClientRequest.Body.bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(outgoing, timeout: .seconds(90))
        var answer = Array(buffer: try await response.body.collect(upTo: 64 << 20))
        let parts = path.split(separator: "/")
        if request.method == .get, response.status.code == 200, parts.count == 4, parts[1] == "accounts", parts[3] == "entries",
           let move = current.pull, let account = AccountID(hex: String(parts[2])), let batch = try? LogBatch(wireBytes: answer) {
            answer = move(account, batch).wireBytes
        }
        var headers = HTTPFields()
        for (name, value) in response.headers where !["content-length", "transfer-encoding", "connection"].contains(name.lowercased()) {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return Response(status: .init(code: Int(response.status.code)), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer)))
    }
}

/// Entries forged or altered as a hostile server would: re-encoded from their bytes, so what the
/// device signed stays signed and only what the test changes differs.
enum Forge {
    /// `entry` with the byte at `offset` of its encoding changed (negative: from the end).
    static func flipping(_ entry: LogEntry, at offset: Int) -> LogEntry? {
        var bytes = entry.wireBytes
        let index = offset >= 0 ? offset : bytes.count + offset
        bytes[index] ^= 0x01
        return try? LogEntry(wireBytes: bytes)
    }

    /// `entry` with its format byte (the first of its encoding) set to `format`.
    static func format(_ entry: LogEntry, _ format: UInt8) -> LogEntry? {
        var bytes = entry.wireBytes
        bytes[0] = format
        return try? LogEntry(wireBytes: bytes)
    }

    /// `entry` with its body replaced by `other`'s (same fields and signature otherwise).
    static func swappingBody(_ entry: LogEntry, from other: LogEntry) -> LogEntry? {
        let mine = entry.wireBytes, theirs = other.wireBytes
        // Layout: format, account, sequence, previous hash, device, counter and epoch (85 bytes)
        // before the body; the 64-byte signature after it.
        let head = 1 + 16 + 8 + 32 + 16 + 8 + 4, tail = 64
        guard mine.count > head + tail, theirs.count > head + tail else { return nil }
        let bytes = Array(mine[..<head]) + Array(theirs[head..<(theirs.count - tail)]) + Array(mine[(mine.count - tail)...])
        return try? LogEntry(wireBytes: bytes)
    }
}

extension Forge {
    /// `entry` moved to follow `head` (its sequence number and previous hash changed, its
    /// signature kept): a replay at a new position.
    static func moving(_ entry: LogEntry, after head: LogHead) -> LogEntry {
        var bytes = entry.wireBytes
        var writer = ByteWriter()
        writer.u64(head.sequence + 1)
        bytes.replaceSubrange(17..<25, with: writer.bytes)
        bytes.replaceSubrange(25..<57, with: head.hash)
        return (try? LogEntry(wireBytes: bytes)) ?? entry
    }
}
