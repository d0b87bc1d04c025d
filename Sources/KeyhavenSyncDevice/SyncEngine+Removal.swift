import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

extension SyncEngine {
    /// `sync remove-device ID`: signs the device's removal into the log and, in the same push,
    /// rotates the view key (and with it the class keys) to a new epoch shared with every device
    /// that stays and the recovery key (retrying when another device pushes first). From then on
    /// every device refuses its entries and item entries under the old epoch, the server refuses
    /// its pulls and pushes, and nothing written after the rotation opens with what it holds. The
    /// removed device's name.
    package func removeDevice(_ device: DeviceID) async throws(SyncEngineError) -> String {
        guard let state = try states.load() else { throw SyncEngineError(.notJoined, "this keychain home does not sync") }
        guard device != state.device else {
            throw SyncEngineError(.badArgument, "this is this device: `keyhaven sync leave` stops syncing here")
        }
        let name = try devices().first { $0.id == device }?.name
        _ = try await appendEntries { context throws(SyncEngineError) in
            guard context.log.roster[device]?.isActive == true else {
                throw SyncEngineError(.badArgument, "\(device) is not a device on the account (`keyhaven sync devices` lists them)")
            }
            return [.removeDevice(device), try Self.rotation(context, leaving: device)]
        }
        return name ?? device.hex
    }
}
