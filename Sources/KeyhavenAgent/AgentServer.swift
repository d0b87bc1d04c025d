#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient
import NIOCore
import NIOPosix

/// The agent's listening side: one per socket, enforced by an exclusive lock on a file beside it.
package final class AgentServer: Sendable {
    package let socket: AgentSocket
    private let service: AgentService
    private let group: MultiThreadedEventLoopGroup
    private let pool: NIOThreadPool
    private let lockFD: Int32
    private let channel: any Channel

    /// Takes the socket (replacing a stale one) and starts listening.
    /// `.duplicateKeychain`-free: another running agent is `.notAvailable` with a message.
    package init(socket: AgentSocket, service: AgentService) throws {
        self.socket = socket
        self.service = service
        try FileSecurity.ensurePrivateDirectory(socket.folder)
        lockFD = open(socket.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw StoreError(.notAvailable, "cannot open \(socket.lockPath)") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw StoreError(.notAvailable, "another keyhavend is already running for \(socket.path)")
        }
        // We hold the lock, so a socket file left here belongs to an agent that is gone.
        unlink(socket.path)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        let (pool, service, group) = (self.pool, service, self.group)
        let shutdown: @Sendable () -> Void = { Self.requestShutdown() }
        let previousMask = umask(0o177)  // the socket file is created 0600
        defer { umask(previousMask) }
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(AgentHandler(service: service, pool: pool, onShutdown: shutdown))
                    }
                }
                .bind(unixDomainSocketPath: socket.path)
                .wait()
        } catch {
            try? pool.syncShutdownGracefully()
            try? group.syncShutdownGracefully()
            close(lockFD)
            throw error
        }
    }

    /// Serves until SIGTERM, SIGINT or a `shutdown` request; then removes the socket. The keys it
    /// held go with the process.
    package func run() {
        Self.waitForShutdown()
        try? channel.close().wait()
        unlink(socket.path)
        try? pool.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
        close(lockFD)
    }

    private static let stop = DispatchSemaphoreBox()

    static func requestShutdown() { stop.signal() }

    private static func waitForShutdown() {
        signal(SIGPIPE, SIG_IGN)
        // The sources live as long as this function, which returns when the agent stops.
        let sources = [SIGTERM, SIGINT].map { sig -> any DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        sources.forEach { $0.cancel() }
    }
}
