#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainStore
import KeyhavenAgentClient

/// The requests about the agent itself rather than a keychain.
extension AgentService {
    /// Provides the Secret Service on the bus at `busAddress` (nil: the agent's own) for as long as
    /// the asking connection stays open.
    func provideSecretService(on busAddress: String?, _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        try secretService.provide(busAddress: busAddress, owner: context.client.map(ObjectIdentifier.init))
        return .provider(pid: getpid())
    }
}
