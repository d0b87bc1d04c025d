import KeychainModel
import KeyhavenAgent
import Synchronization
import Testing

/// Who keeps the agent's Secret Service: the connections that asked for it, or the agent's own start.
struct SecretServiceHostTests {
    /// Counts starts and stops of a provider that does nothing.
    final class Provider: Sendable {
        let counts = Mutex((starts: 0, stops: 0))

        func install(on host: SecretServiceHost) {
            host.install { [self] (_: String?) throws(StoreError) in
                counts.withLock { $0.starts += 1 }
                return { [self] in counts.withLock { $0.stops += 1 } }
            }
        }
    }

    final class Connection {}

    @Test("Two connections ask: one provider, stopped when the last of them closes; an unrelated close changes nothing")
    func lastOwnerStops() throws {
        let host = SecretServiceHost(), provider = Provider()
        provider.install(on: host)
        let (first, second, other) = (Connection(), Connection(), Connection())
        try host.provide(busAddress: "unix:path=/a", owner: ObjectIdentifier(first))
        try host.provide(busAddress: "unix:path=/a", owner: ObjectIdentifier(second))
        #expect(provider.counts.withLock { $0.starts } == 1 && host.isProviding)
        host.connectionClosed(ObjectIdentifier(other))
        host.connectionClosed(ObjectIdentifier(first))
        #expect(host.isProviding && provider.counts.withLock { $0.stops } == 0)
        host.connectionClosed(ObjectIdentifier(second))
        #expect(!host.isProviding && provider.counts.withLock { $0.stops } == 1)
    }

    @Test("Started with the agent, the provider outlives every connection; without an installed provider, asking is unimplemented")
    func agentsOwnStart() throws {
        let host = SecretServiceHost(), provider = Provider()
        #expect(throws: StoreError.self) { try host.provide(busAddress: nil, owner: nil) }
        provider.install(on: host)
        try host.provide(busAddress: nil, owner: nil)
        let connection = Connection()
        try host.provide(busAddress: "unix:path=/a", owner: ObjectIdentifier(connection))
        host.connectionClosed(ObjectIdentifier(connection))
        #expect(host.isProviding && provider.counts.withLock { $0 } == (1, 0))
    }
}
