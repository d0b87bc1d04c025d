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
/// never holds the event loop, and other clients go on. While a request is being answered the
/// connection is not read (backpressure): of a client that sends without reading the answers, the
/// agent holds at most one burst of reads (SwiftNIO's 4 x 64 KiB) and one answer, and the rest
/// stays in the client's own socket. A malformed frame ends this connection; a client
/// beyond ``AgentFraming/maximumConnections`` is closed at once.
final class AgentHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: AgentService
    private let pool: NIOThreadPool
    private let onShutdown: @Sendable () -> Void
    private let connections: ConnectionCount
    private var counted = false
    private var verified = false
    private var busy = false
    /// Frames read but not yet answered, oldest first (a burst of small requests can be thousands).
    private var pending = CircularBuffer<ByteBuffer>()

    init(service: AgentService, pool: NIOThreadPool, connections: ConnectionCount, onShutdown: @escaping @Sendable () -> Void) {
        self.service = service
        self.pool = pool
        self.connections = connections
        self.onShutdown = onShutdown
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { connections.leave() }
        counted = false
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
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        future.whenComplete { result in
            let (handler, context) = loopBound.value
            guard case .success(let credentials) = result, credentials.uid == getuid() else {
                context.close(promise: nil)
                return
            }
            handler.verified = true
            handler.next(context: context)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
        next(context: context)
    }

    /// Answers the next waiting frame unless one is being answered; reads more only when none waits.
    private func next(context: ChannelHandlerContext) {
        guard verified, !busy else {
            try? context.channel.syncOptions?.setOption(.autoRead, value: false)
            return
        }
        guard !pending.isEmpty else {
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
            return
        }
        busy = true
        try? context.channel.syncOptions?.setOption(.autoRead, value: false)
        process(pending.removeFirst(), context: context)
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
        let service = self.service
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let shutdown = onShutdown
        pool.runIfActive(eventLoop: context.eventLoop) { () -> [UInt8] in
            AgentFraming.encode(service.respond(to: request, forHome: home))
        }.whenComplete { result in
            let context = loopBound.value.1
            guard case .success(var bytes) = result, !bytes.isEmpty else {
                context.close(promise: nil)
                return
            }
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in loopBound.value.0.finished(context: loopBound.value.1) }
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes)), promise: written)
            zeroize(&bytes)
            if case .shutdown = request { shutdown() }
        }
    }
}
