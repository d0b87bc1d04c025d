import ArgumentParser
import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeyhavenCLI
import KeyhavenSyncCore
import KeyhavenSyncDevice

// The subcommands that list devices, remove one and replace the recovery key.
extension SyncDevices: SyncWork {
    package func work() async throws {
        let devices: [SyncDeviceSummary]
        if let agent = try runningAgent() {
            devices = try agent.ask("devices") { (agent) throws(StoreError) in try agent.send(.syncDevices).syncDevices() }
        } else {
            let engine = try engine()
            devices = try await reporting("devices") { () throws(SyncEngineError) in try engine.devices() }.map(SyncDeviceSummary.init)
        }
        if json {
            printJSON(devices.map { device -> [String: Any] in
                ["id": device.id, "name": device.name, "addedBy": device.addedBy, "addedAt": device.addedAt,
                 "lastSeen": device.lastSeen, "lastHeartbeat": device.lastHeartbeat.map { $0 as Any } ?? NSNull(), "active": device.isActive, "thisDevice": device.isThisDevice,
                 "recoveryKey": device.isRecoveryKey]
            })
            return
        }
        for device in devices {
            var notes: [String] = []
            if device.isThisDevice { notes.append("this device") }
            if device.isRecoveryKey { notes.append("recovery key") }
            if !device.isActive { notes.append("removed") }
            printLine("\(device.id)  \(device.name)  added by \(device.addedBy) at \(device.addedAt), last seen at \(device.lastSeen)"
                      + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))"))
        }
    }
}

extension SyncRemoveDevice: SyncWork {
    package func work() async throws {
        guard let device = DeviceID(hex: id) else {
            printError("keyhaven: sync remove-device: a device id is 32 hexadecimal digits")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: Int32(-50))))
        }
        let engine = try engine()
        let name = try await reporting("remove-device") { () throws(SyncEngineError) in try await engine.removeDevice(device) }
        printLine("Removed \(name) (\(device.hex)): it can no longer pull or push. What it already had stays on it: change those passwords.")
    }
}

extension SyncRotateRecoveryKey: SyncWork {
    package func work() async throws {
        let engine = try engine()
        let key = try await reporting("rotate-recovery-key") { () throws(SyncEngineError) in try await engine.rotateRecoveryKey() }
        printLine("Recovery key: \(key.text)")
        printLine("The old recovery key opens nothing written from now on. Keep the new one offline; it is shown once.")
    }
}
