import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the peer's address (for the rate limits) and the
/// largest body the server reads (a push of the most entries a push may carry).
package struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    package var maxUploadSize: Int { SyncService.maximumBodySize }
}
