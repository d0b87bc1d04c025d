import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the peer's address (for the rate limits and the body
/// budget). Each route reads its body with its own limit (``SyncService``); Hummingbird's own
/// limit is the largest of them.
package struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    package var maxUploadSize: Int { SyncLimits().bytesPerPush }
}
