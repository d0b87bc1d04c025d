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
    /// Where prompts wait for the user, apart from the requests' pool.
    private let prompts: NIOThreadPool
    private let lockFD: Int32
    private let channel: any Channel
    private let stop: StopRequest

    /// Takes the socket (replacing a stale one) and starts listening.
    /// `.duplicateKeychain`-free: another running agent is `.notAvailable` with a message.
    package init(socket: AgentSocket, service: AgentService) throws {
        self.socket = socket
        self.service = service
        try socket.preparePrivateFolder()
        lockFD = open(socket.lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw StoreError(.notAvailable, "cannot open \(socket.lockPath)") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw StoreError(.notAvailable, "another keyhavend is already running for \(socket.path)")
        }
        // We hold the lock, so a socket file left here belongs to an agent that is gone.
        unlink(socket.path)
        let stop = StopRequest()
        self.stop = stop
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        prompts = NIOThreadPool(numberOfThreads: 4)
        prompts.start()
        let (pool, prompts, service, group) = (self.pool, self.prompts, service, self.group)
        let connections = ConnectionCount(limit: AgentFraming.maximumConnections)
        // One event loop serves every connection; its polling after answers is shared by them.
        let loop = group.next()
        let wakefulness = NIOLoopBoundBox.makeEmptyBox(valueType: Wakefulness.self, eventLoop: loop)
        let shutdown: @Sendable () -> Void = { stop.request() }
        let previousMask = umask(0o177)  // the socket file is created 0600
        defer { umask(previousMask) }
        // The socket is bound under a private name and renamed into place once it listens: a
        // client that sees the file can connect (binding in place leaves a moment between bind
        // and listen when connects are refused).
        let staging = socket.folder + "/.agent-\(getpid()).sock"
        unlink(staging)
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let shared = wakefulness.value ?? Wakefulness(eventLoop: loop)
                        wakefulness.value = shared
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(AgentHandler(service: service, pool: pool, prompts: prompts, connections: connections,
                                                                                    wakefulness: shared, onShutdown: shutdown))
                    }
                }
                .bind(unixDomainSocketPath: staging)
                .wait()
            guard rename(staging, socket.path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? channel.close().wait()
                unlink(staging)
                throw StoreError(.notAvailable, "cannot put the socket at \(socket.path): \(reason)")
            }
        } catch {
            try? pool.syncShutdownGracefully()
            try? prompts.syncShutdownGracefully()
            try? group.syncShutdownGracefully()
            close(lockFD)
            throw error
        }
    }

    /// Serves until SIGTERM, SIGINT or a `shutdown` request; then removes the socket. The keys it
    /// held go with the process.
    package func run() {
        stop.wait()
        try? channel.close().wait()
        unlink(socket.path)
        try? pool.syncShutdownGracefully()
        try? prompts.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
        close(lockFD)
    }
}
