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

/// One client connection: checks the peer is this user, then answers frames in order.
///
/// Requests run on a thread pool (SQLite and scrypt block), so a slow request or a slow client
/// never holds the event loop, and other clients go on. A malformed frame ends this connection.
final class AgentHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: AgentService
    private let pool: NIOThreadPool
    private let onShutdown: @Sendable () -> Void
    private var verified = false
    private var pending: [ByteBuffer] = []

    init(service: AgentService, pool: NIOThreadPool, onShutdown: @escaping @Sendable () -> Void) {
        self.service = service
        self.pool = pool
        self.onShutdown = onShutdown
    }

    func channelActive(context: ChannelHandlerContext) {
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
            for frame in handler.pending { handler.process(frame, context: context) }
            handler.pending = []
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if verified { process(frame, context: context) } else { pending.append(frame) }
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
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let shutdown = onShutdown
        pool.runIfActive(eventLoop: context.eventLoop) { () -> [UInt8] in
            AgentFraming.encode(service.respond(to: request, forHome: home))
        }.whenComplete { result in
            let context = loopBound.value
            guard case .success(var bytes) = result, !bytes.isEmpty else {
                context.close(promise: nil)
                return
            }
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
            zeroize(&bytes)
            if case .shutdown = request { shutdown() }
        }
    }
}
