import FoundationEssentials
import HTTPTypes
import Hummingbird
import KeychainModel
import KeyhavenSyncCore
import Logging
import NIOCore
import NIOPosix

/// The server's HTTP API (docs/sync.md, "The server's API"). Bodies are the protocol's binary
/// encodings; a refusal is a 4xx or 5xx with its code in a `Keyhaven-Error` header and a short
/// message that names what was wrong, never what a request carried.
///
/// - `GET /v1/health`: 200 while the database answers.
/// - `POST /v1/accounts`: a new account from its first entry; 201 and the head.
/// - `POST /v1/accounts/ID/entries`: a push (``LogBatch``); 200 and the new head, 409 when the log
///   moved on.
/// - `GET /v1/accounts/ID/entries?after=N&wait=S`: a pull, signed by a device on the account
///   (``RequestSignature``); waits up to `S` seconds (30 at most) for entries after `N`.
/// - `GET /v1/devices/ID/account`: the account a device is on, signed by that device (how a
///   recovery key finds its account).
/// - `POST /v1/pairing/SLOT/SIDE` and `GET /v1/pairing/SLOT/SIDE?after=N&wait=S`: the pairing relay.
///
/// A waiting pull or relay read is woken by PostgreSQL's notification of a change (``Wakeups``),
/// from whichever server took the push; it answers at once when the server stops.
package struct SyncService: Sendable {
    /// The longest a pull or a relay read waits.
    package static let maximumWait = 30

    let store: SyncStore
    let wakeups: Wakeups
    /// The request bodies held at once (per address and in all).
    let bodies: BodyBudget

    package init(store: SyncStore, wakeups: Wakeups, bodies: BodyBudget = BodyBudget()) {
        (self.store, self.wakeups, self.bodies) = (store, wakeups, bodies)
    }

    /// Each route's largest body, enforced before a byte past it is held: a first entry, a push
    /// (``SyncLimits/bytesPerPush``), a relayed pairing message.
    var accountBodyLimit: Int { LogEntry.maximumSize + 4096 }
    var pushBodyLimit: Int { store.limits.bytesPerPush }
    static let pairingBodyLimit = RelayMessages.maximumSize

    /// The routes, behind the rate limit; `measured`: each request counted and timed (swift-metrics).
    /// Each concern is a route collection of its own (SyncService+Routes.swift).
    package func router(limiter: RateLimiter, trustedProxies: Set<String> = [], measured: Bool = false) -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        if measured { router.add(middleware: MetricsMiddleware()) }
        router.add(middleware: ClientAddressMiddleware(trusted: trustedProxies))
        router.add(middleware: RateLimitMiddleware(limiter: limiter))
        router.get("/v1/health") { _, _ in await answer { () throws(SyncServerError) in try await store.ping(); return Self.ok([]) } }
        router.addRoutes(accountRoutes(), atPath: "/v1/accounts")
        router.addRoutes(deviceRoutes(), atPath: "/v1/devices")
        router.addRoutes(pairingRoutes(), atPath: "/v1/pairing")
        return router
    }

    /// Waits for news on `topic` until `deadline`: registers before each look, so that a change
    /// committed after the look wakes it, and answers with what the look found once it says it is
    /// done, the deadline has passed, or the server stops. A wait that ran out without a wake-up
    /// answers with the last look's result, without looking again. A pull and a relay read both
    /// wait this way.
    func longPoll<Found>(_ topic: Wakeups.Topic, until deadline: ContinuousClock.Instant,
                         look: (Wakeups.Waiter) async throws(SyncServerError) -> (found: Found, done: Bool)) async throws(SyncServerError) -> Found {
        while true {
            let waiter = wakeups.register(topic)
            defer { wakeups.unregister(waiter) }
            let (found, done) = try await look(waiter)
            if done || ContinuousClock.now >= deadline || wakeups.isStopping { return found }
            await waiter.wait(until: wakeups.nextLook(before: deadline))
            if ContinuousClock.now >= deadline, !wakeups.wasSignalled(waiter) { return found }
        }
    }

    /// A pull of `account` after `sequence`, waiting until `deadline` for entries. A look answers
    /// from what ``Wakeups`` keeps of the head when it is the one the device has, else asks the
    /// database; once stopping, it asks no more.
    func poll(_ account: AccountID, after sequence: UInt64, until deadline: ContinuousClock.Instant) async throws(SyncServerError) -> Response {
        var head: LogHead?
        let batch = try await longPoll(.account(account), until: deadline) { (waiter) throws(SyncServerError) -> (found: LogBatch, done: Bool) in
            if let known = wakeups.knownHead(of: account), known.sequence == sequence {
                store.metrics.answeredWithoutQuery.increment()
                head = known
                return (LogBatch(head: known, entries: []), false)
            }
            if let head, wakeups.isStopping { return (LogBatch(head: head, entries: []), false) }
            let (entries, found) = try await store.pull(account, after: sequence)
            if !entries.isEmpty { return (LogBatch(head: found, entries: entries), true) }
            wakeups.remember(found, of: account, lookedAfter: waiter)
            head = found
            return (LogBatch(head: found, entries: []), false)
        }
        let bytes = batch.wireBytes
        if !batch.entries.isEmpty {
            store.metrics.pulledEntries.increment(by: batch.entries.count)
            // The answer's bytes past its head: the entries as sent, without encoding them again.
            store.metrics.pulledBytes.increment(by: bytes.count - LogBatch(head: batch.head, entries: []).wireBytes.count)
        }
        return Self.ok(bytes)
    }

    /// Checks the request's device signature against the account's devices (their keys as
    /// ``Wakeups`` keeps them, or from the database).
    func authenticate(_ request: Request, account: AccountID, body: [UInt8]) async throws(SyncServerError) {
        let signature = try Self.signature(request)
        let keys: DevicePublicKeys
        if let known = wakeups.knownKeys(of: signature.device, on: account) {
            keys = known
        } else {
            let waiter = wakeups.register(.account(account), isPoll: false)
            defer { wakeups.unregister(waiter) }
            keys = try await store.deviceKeys(account, device: signature.device)
            wakeups.remember(keys, of: signature.device, on: account, lookedAfter: waiter)
        }
        try Self.checkSignature(request, device: signature.device, keys: keys, body: body)
    }

    static func signature(_ request: Request) throws(SyncServerError) -> RequestSignature {
        let field = { (name: String) in HTTPField.Name(name).flatMap { request.headers[$0] } }
        guard let signature = RequestSignature(device: field(RequestSignature.deviceHeader), date: field(RequestSignature.dateHeader),
                                               signature: field(RequestSignature.signatureHeader)) else {
            throw SyncServerError(.unauthorized, "the request is not signed by a device")
        }
        return signature
    }

    /// Whether `request` is signed by `device`, whose keys are `keys`, recently.
    static func checkSignature(_ request: Request, device: DeviceID, keys: DevicePublicKeys, body: [UInt8]) throws(SyncServerError) {
        let signature = try Self.signature(request)
        guard signature.device == device,
              signature.isValid(method: request.method.rawValue, target: request.head.path ?? "", body: body, keys: keys) else {
            throw SyncServerError(.unauthorized, "the request's signature does not verify, or its date is more than 5 minutes off")
        }
    }

    /// The response for `body`, or the refusal it threw.
    func answer(_ body: () async throws(SyncServerError) -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            return Self.refusal(error)
        }
    }

    static func ok(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/octet-stream"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A refusal: its status, its code in `Keyhaven-Error`, its message as plain text.
    package static func refusal(_ error: SyncServerError, retryAfter: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        headers[HTTPField.Name("Keyhaven-Error")!] = error.code.description
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: HTTPResponse.Status(code: error.code.httpStatus), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: error.message + "\n")))
    }

    /// The request's body, of at most `limit` bytes: a Content-Length over it is refused before a
    /// byte is read, and a body that grows past it as soon as it does; each chunk's bytes are
    /// taken from ``bodies`` before it is kept (429 for an address holding its share, 503 when the
    /// server holds all it may), and a body that stops coming or comes too slowly is answered 408
    /// and gives its bytes back at once (``BodyReceipt``).
    func body(_ request: Request, _ context: SyncRequestContext, limit: Int) async throws(SyncServerError) -> [UInt8] {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit { throw SyncServerError(.tooLarge, "the request body is over \(Self.size(limit))") }
        let receipt = BodyReceipt(budget: bodies, key: context.limitKey, limit: limit, declared: declared, limits: store.limits)
        defer { receipt.release() }
        let body = request.body
        let reading = Task { for try await chunk in body { try receipt.append(chunk) } }
        // An event loop's timer, not a sleeping task per body (see ``withDeadline``); an overdue
        // body's reading is cancelled, and awaited below: the body is read to its end or cancelled
        // before this returns, since the server reads what is left of it once the route answers,
        // and a request's body has one reader at a time.
        let watchdog = MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            if receipt.overdue() != nil { reading.cancel() }
        }
        defer { watchdog.cancel() }
        do {
            try await withTaskCancellationHandler { try await reading.value } onCancel: { reading.cancel() }
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw receipt.foundOverdue ?? SyncServerError(.badRequest, "the request body could not be read")
        }
        // A body cancelled for being overdue may also end as if it were whole.
        if let overdue = receipt.foundOverdue { throw overdue }
        return receipt.bytes
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : bytes % 1024 == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }

    static func account(_ context: SyncRequestContext) throws(SyncServerError) -> AccountID {
        guard let account = context.parameters.get("account").flatMap(AccountID.init(hex:)) else {
            throw SyncServerError(.badRequest, "an account id is 32 hexadecimal digits")
        }
        return account
    }

    static func pairing(_ context: SyncRequestContext) throws(SyncServerError) -> (slot: [UInt8], side: Int) {
        guard let slot = context.parameters.get("slot").flatMap(Hex.decode), slot.count == 32,
              let side = context.parameters.get("side").flatMap({ Int($0) }), side == 0 || side == 1 else {
            throw SyncServerError(.badRequest, "a pairing slot is 64 hexadecimal digits and a side 0 or 1")
        }
        return (slot, side)
    }

    static func number(_ request: Request, _ name: String) throws(SyncServerError) -> Int {
        guard let text = request.uri.queryParameters[name[...]] else { return 0 }
        guard let value = Int(text), value >= 0, text.allSatisfy(\.isNumber) else {
            throw SyncServerError(.badRequest, "\(name) is a number from 0")
        }
        return value
    }

    static func wait(_ request: Request) throws(SyncServerError) -> Int {
        min(try number(request, "wait"), maximumWait)
    }
}

extension WireCodable {
    /// Decodes a request's body: a malformed one is a bad request.
    static func decodeRequest(_ bytes: [UInt8]) throws(SyncServerError) -> Self {
        do {
            return try Self(wireBytes: bytes)
        } catch {
            throw SyncServerError(.badRequest, "the body is not a well-formed \(Self.self): \(error.message)")
        }
    }
}
