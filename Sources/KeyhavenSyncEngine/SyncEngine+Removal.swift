import FoundationEssentials
import KeychainModel
import KeyhavenSyncProtocol

extension SyncEngine {
    /// `sync remove-device ID`: signs the device's removal into the log (retrying when another
    /// device pushes first). From then on every device refuses its entries and the server refuses
    /// its pulls and pushes. The removed device's name.
    package func removeDevice(_ device: DeviceID) async throws(SyncEngineError) -> String {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        guard device != state.device else {
            throw SyncEngineError(.badArgument, "this is this device: `keyhaven sync leave` stops syncing here")
        }
        let name = try devices().first { $0.id == device }?.name
        let identity = try state.identity()
        let client = try Self.client(state.server, http: http)
        let cache = LogCache(home: home, account: state.account)
        var context = try loadContext(state, identity: identity, cache: cache)
        for _ in 0..<20 {
            _ = try await pull(&context, client: client, identity: identity, cache: cache)
            guard context.log.roster[device]?.isActive == true else {
                throw SyncEngineError(.badArgument, "\(device) is not a device on the account (`keyhaven sync devices` lists them)")
            }
            let counter = max(context.state.counter, context.log.roster[context.state.device]?.lastCounter ?? 0) + 1
            let entry = LogEntry(.removeDevice(device), account: context.state.account, after: context.log.head, counter: counter,
                                 epoch: context.log.epoch, signedBy: identity)
            if try await pushVerified([entry], context: &context, client: client, cache: cache) {
                try states.save(context.state)
                return name ?? device.hex
            }
        }
        throw SyncEngineError(.server, "the log kept moving during 20 rounds: remove it again")
    }
}
