import ArgumentParser
import Foundation
import KeyhavenCLI
import KeyhavenSyncCore
import KeyhavenSyncDevice

// The subcommands that make, join, recover or leave an account, and pair devices.
extension SyncCreate: SyncWork {
    package func work() async throws {
        let (server, name) = (device.server, device.deviceName)
        let engine = try engine()
        let recovery = try await reporting("create") { () throws(SyncEngineError) in try await engine.create(server: server, name: name) }
        let status = try engine.status()
        printLine("Created a sync account on \(status?.server ?? server); this device is \(status?.device.hex ?? "?") (\(name)).")
        printLine("Recovery key: \(recovery.text)")
        printLine("Keep the recovery key offline. It is shown once; with it a machine that lost everything gets the items back.")
    }
}

extension SyncInvite: SyncWork {
    package func work() async throws {
        let engine = try engine()
        guard try await reporting("invite", { () throws(SyncEngineError) in try engine.status() }) != nil else {
            printError("keyhaven: sync invite: this keychain home does not sync: `keyhaven sync create` or `sync join` first")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: Int32(-25300))))
        }
        let code = PairingCode()
        // First, alone and at once: scripts read it from a pipe while this waits.
        printLine(code.text)
        let joined = try await reporting("invite") { () throws(SyncEngineError) in try await engine.invite(code: code, timeout: timeout) }
        printLine("Added \(joined.name) (\(joined.device.hex)).")
    }
}

extension SyncJoin: SyncWork {
    package func work() async throws {
        guard let pairing = PairingCode(text: code) else {
            printError("keyhaven: sync join: that is not a pairing code (32 letters and digits, as `keyhaven sync invite` prints it)")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: Int32(-50))))
        }
        let (server, name) = (device.server, device.deviceName)
        let engine = try engine(showsProgress: true)
        let report = try await reporting("join") { () throws(SyncEngineError) in try await engine.join(server: server, code: pairing, name: name) }
        printLine("Joined; in step at \(report.head.fingerprint): \(report.added) items added here, \(report.pushed) pushed.")
    }
}

extension SyncRecover: SyncWork {
    package func work() async throws {
        let text = recoveryKey == "-" ? (readLine(strippingNewline: true) ?? "") : recoveryKey
        guard let key = RecoveryKey(text: text) else {
            printError("keyhaven: sync recover: that is not a recovery key (52 letters and digits, as `keyhaven sync create` printed it)")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: Int32(-50))))
        }
        let (server, name) = (device.server, device.deviceName)
        let engine = try engine(showsProgress: true)
        let report = try await reporting("recover") { () throws(SyncEngineError) in try await engine.recover(server: server, key: key, name: name) }
        printLine("Recovered; in step at \(report.head.fingerprint): \(report.added) items added here.")
    }
}

extension SyncLeave: SyncWork {
    package func work() async throws {
        let engine = try engine()
        try await reporting("leave") { () throws(SyncEngineError) in try engine.leave() }
        printLine("This machine no longer syncs; its items stay in the keychain.")
    }
}
