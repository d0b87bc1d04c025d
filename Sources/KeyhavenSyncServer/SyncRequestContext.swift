import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the client's address (for the rate limits and the
/// body budget): the peer's, or the one a trusted proxy forwarded (``ClientAddressMiddleware``).
/// Each route reads its body with its own limit (``SyncService``); Hummingbird's own limit is the
/// largest of them.
package struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?
    /// Whose request this is, as far as the limits are concerned.
    package var clientAddress: String

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = remoteAddress?.ipAddress ?? "unknown"
    }

    package var maxUploadSize: Int { SyncLimits().bytesPerPush }

    /// What the rate limits and the body budget count this request as (``ClientKey``).
    package var limitKey: String { ClientKey.of(clientAddress) }
}
