#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient
import NIOCore
import NIOPosix

/// One client connection: checks the peer is this user, then answers frames one at a time, in order.
///
/// Requests run on a thread pool (SQLite and scrypt block), so a slow request or a slow client
/// never holds the event loop, and other clients go on. The exceptions are quick reads whose locks
/// are all free at that moment (``attemptHere(_:home:)``): answered on the event loop, two thread
/// hand-offs sooner, and sent to the pool like the rest when a lock is held. While a request is
/// being answered the connection is not read (backpressure): of a client that sends without reading
/// the answers, the agent holds at most one burst of reads (SwiftNIO's 4 x 64 KiB) and one answer,
/// and the rest stays in the client's own socket. A malformed frame ends this connection; a client
/// beyond ``AgentFraming/maximumConnections`` is closed at once.
///
/// The peer process is pinned at connect (``ClientProcess``). A request that needs the user's
/// answer (``AgentService/Outcome/question(_:_:)``) is asked on the prompt pool, never on the
/// request pool, so a prompt left open holds no thread other clients need; the request then runs
/// again with the answer (it changed nothing the first time).
final class AgentHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: AgentService
    private let pool: NIOThreadPool
    private let prompts: NIOThreadPool
    private var client: ClientProcess?
    private let onShutdown: @Sendable () -> Void
    private let connections: ConnectionCount
    /// The event loop's polling after answers (``Wakefulness``).
    private let wakefulness: Wakefulness
    /// This connection's socket, when found (polled after answers).
    private var descriptor: Int32?
    /// When the last answer was written (0: none since the last request), and how soon requests
    /// have been following answers.
    private var answeredAt: UInt64 = 0
    /// The last answer was made on the event loop (a quick read, an echo, a hello), not on a pool.
    private var answeredHere = false
    private var gaps = PollBudget(longest: Wakefulness.longest)
    private var counted = false
    private var verified = false
    private var busy = false
    /// Inside ``next(context:)``'s loop.
    private var looping = false
    /// An answer that ends the connection was sent: nothing more is read or answered.
    private var closing = false
    /// Frames read but not yet answered, oldest first (a burst of small requests can be thousands).
    private var pending = CircularBuffer<ByteBuffer>()

    init(service: AgentService, pool: NIOThreadPool, prompts: NIOThreadPool, connections: ConnectionCount,
         wakefulness: Wakefulness, onShutdown: @escaping @Sendable () -> Void) {
        self.service = service
        self.pool = pool
        self.prompts = prompts
        self.connections = connections
        self.wakefulness = wakefulness
        self.onShutdown = onShutdown
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { connections.leave() }
        counted = false
        if let descriptor { wakefulness.forget(descriptor) }
        descriptor = nil
        context.fireChannelInactive()
    }

    func channelActive(context: ChannelHandlerContext) {
        guard connections.enter() else {
            context.close(promise: nil)
            return
        }
        counted = true
        // Only processes of the agent's own user may talk to it (the folder is 0700 too).
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(PeerCredentials.option))
        // The socket's own pidfd of its peer (Linux 6.5+): no window for a recycled pid.
        let pidfd: EventLoopFuture<Int32> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(77))
        let cookie: EventLoopFuture<UInt64> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SocketDescriptor.cookieOption))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        cookie.whenSuccess { cookie in
            let (handler, context) = loopBound.value
            guard context.channel.isActive, let fd = SocketDescriptor.find(cookie: cookie) else { return }
            handler.descriptor = fd
            handler.wakefulness.watch(fd)
        }
        future.and(pidfd.recover { _ in -1 }).whenComplete { result in
            let (handler, context) = loopBound.value
            guard case .success(let (credentials, pidfd)) = result, credentials.uid == getuid() else {
                if case .success(let (_, pidfd)) = result, pidfd >= 0 { close(pidfd) }
                context.close(promise: nil)
                return
            }
            handler.client = ClientProcess(pid: credentials.pid, pidfd: pidfd >= 0 ? pidfd : ClientProcess.openPidfd(credentials.pid))
            handler.verified = true
            handler.next(context: context)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answeredAt != 0 {
            gaps.record(MonotonicClock.nanoseconds() &- answeredAt)
            answeredAt = 0
        }
        pending.append(unwrapInboundIn(data))
        next(context: context)
    }

    /// Answers the waiting frames in order, one at a time; reads more only when none is being
    /// answered. An answer made here whose write completes at once comes back through
    /// ``finished(context:)`` into this loop (not into a deeper call: a burst of thousands of
    /// requests must not nest thousands deep).
    private func next(context: ChannelHandlerContext) {
        guard verified else {
            setAutoRead(false, context)
            return
        }
        guard !looping else { return }
        looping = true
        while !busy, !closing, context.channel.isActive, let frame = pending.popFirst() {
            busy = true
            process(frame, context: context)
        }
        looping = false
        setAutoRead(!busy && !closing, context)
        // Answered everything it had: the next request may come soon. Only when this connection's
        // own socket is among those polled (else its next request would not end the poll).
        // Only after an answer made here: after one from the pool (a write, waiting for the disk)
        // polling made writes no faster and spent CPU (docs/benchmarks.md, "The event loop stays awake").
        if !busy, !closing, answeredAt != 0, answeredHere, descriptor != nil { wakefulness.stayAwake(for: gaps.whole()) }
    }

    /// Reading paused while an answer is being made or written (backpressure), resumed after;
    /// SwiftNIO changes the socket's registration only when the value changes.
    private func setAutoRead(_ on: Bool, _ context: ChannelHandlerContext) {
        try? context.channel.syncOptions?.setOption(.autoRead, value: on)
    }

    /// The current request is answered (or the connection is closing).
    private func finished(context: ChannelHandlerContext) {
        busy = false
        if context.channel.isActive { next(context: context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func process(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        let request: AgentRequest
        let home: String?
        var payload = Array(frame.readableBytesView)
        defer { zeroize(&payload) }
        do throws(StoreError) {
            (request, home) = try AgentFraming.decodeWithHome(AgentRequest.self, from: payload)
        } catch {
            // A client of another protocol version is told so (it can read the version byte);
            // anything else malformed just ends the connection.
            busy = false
            closing = true
            guard error.code == .wrongVersion else {
                context.close(promise: nil)
                return
            }
            let answer = AgentFraming.encode(AgentResponse(error: StoreError(.wrongVersion,
                "keyhavend speaks agent protocol \(AgentFraming.version): stop it (keyhaven agent stop) and run the command again")))
            // Closed once the answer is written, not before.
            let written = context.eventLoop.makePromise(of: Void.self)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: answer)), promise: written)
            return
        }
        // The floor of the path: answered here, on the event loop, with no keychain touched.
        if case .echo(let data) = request {
            answeredHere = true
            var response = AgentResponse()
            if data.count <= AgentFraming.maximumEcho { response.data = data } else {
                response = AgentResponse(error: StoreError(.invalidParameter, "an echo of more than \(AgentFraming.maximumEcho) bytes"))
            }
            answer(AgentFraming.encode(response), to: request, context: context)
            return
        }
        client?.beginRequest()
        answeredHere = false
        if let step = attemptHere(request, home: home) {
            answeredHere = true
            take(step, request: request, home: home, round: 0, context: context)
        } else {
            run(request, home: home, round: 0, context: context)
        }
    }

    /// Answers a quick read here, on the event loop, when nothing it needs is busy: two thread
    /// hand-offs fewer than the pool (docs/benchmarks.md, "Through the agent"). Only a `hello`, or
    /// a look-up of at most one item by a program already identified, and only if every lock it
    /// needs is free (``NonBlockingAttempt``); anything else, or a lock held elsewhere, goes to the
    /// pool (nil), with nothing changed. A page SQLite must read from the disk is read here too.
    private func attemptHere(_ request: AgentRequest, home: String?) -> Step? {
        // A hello touches no keychain and asks nothing of the program: answered at once.
        if case .hello = request { return Step(service.respond(to: request, forHome: home, context: .inProcess)) }
        guard case .find(_, let query, _, _) = request, query.limit == 1, let client, let identity = client.knownIdentity() else { return nil }
        let requestContext = service.context(for: client, identity: identity)
        let outcome = NonBlockingAttempt.run { service.respond(to: request, forHome: home, context: requestContext) }
        if case .response(let response) = outcome, response.error?.code == .wouldBlock { return nil }
        return Step(outcome)
    }

    /// What running a request gives: the answer's bytes, or a question for the user.
    private enum Step: Sendable {
        case answer([UInt8])
        case ask(AccessQuestion, RequestContext, StoreError)

        init(_ outcome: AgentService.Outcome) {
            switch outcome {
            case .response(let response): self = .answer(AgentFraming.encode(response))
            case .question(let question, let requestContext, let error): self = .ask(question, requestContext, error)
            }
        }
    }

    /// Runs the request on the pool; asks the user when it needs to, then runs it again.
    private func run(_ request: AgentRequest, home: String?, round: Int, context: ChannelHandlerContext) {
        let (service, client) = (self.service, self.client)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        wakefulness.leave()
        pool.runIfActive(eventLoop: context.eventLoop) { () -> Step in
            Step(service.respond(to: request, forHome: home, context: service.context(for: client)))
        }.whenComplete { result in
            let (handler, context) = loopBound.value
            handler.wakefulness.comeBack()
            switch result {
            case .success(let step): handler.take(step, request: request, home: home, round: round, context: context)
            case .failure: context.close(promise: nil)
            }
        }
    }

    /// Writes the answer, or asks the user (on the prompt pool) and runs the request again on the pool.
    private func take(_ step: Step, request: AgentRequest, home: String?, round: Int, context: ChannelHandlerContext) {
        switch step {
        case .answer(let bytes): answer(bytes, to: request, context: context)
        case .ask(let question, let requestContext, let unasked):
            guard round < 4, requestContext.client != nil, requestContext.identity != nil else {
                answer(AgentFraming.encode(AgentResponse(error: StoreError(.interactionNotAllowed, "too many prompts for one request"))),
                       to: request, context: context)
                return
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            wakefulness.leave()
            ask(question, context: requestContext, on: context.eventLoop).whenComplete { answered in
                let (handler, context) = loopBound.value
                handler.wakefulness.comeBack()
                switch answered {
                case .success:
                    handler.run(request, home: home, round: round + 1, context: context)
                case .failure(let error):
                    var failure = error as? StoreError ?? StoreError(.userCanceled, "the prompt failed")
                    // No way to ask: the check's own answer (a group not granted: errSecMissingEntitlement).
                    if failure.code == .interactionNotAllowed { failure = StoreError(unasked.code, unasked.message + "; " + failure.message) }
                    handler.answer(AgentFraming.encode(AgentResponse(error: failure)), to: request, context: context)
                }
            }
        }
    }

    /// Asks the user on the prompt pool; Always Allow is remembered before the request runs again.
    private func ask(_ question: AccessQuestion, context: RequestContext, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let service = self.service
        return prompts.runIfActive(eventLoop: eventLoop) { try service.answer(question, context: context) }
    }

    /// Writes an answer; the next request is read once it is written.
    private func answer(_ bytes: [UInt8], to request: AgentRequest, context: ChannelHandlerContext) {
        var bytes = bytes
        guard !bytes.isEmpty else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in loopBound.value.0.finished(context: loopBound.value.1) }
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes)), promise: written)
        answeredAt = MonotonicClock.nanoseconds()
        zeroize(&bytes)
        if case .shutdown = request { onShutdown() }
    }
}
