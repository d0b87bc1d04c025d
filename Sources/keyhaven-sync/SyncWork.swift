import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore
import KeyhavenCLI
import KeyhavenSyncEngine
import KeyhavenSyncProtocol
import Synchronization

extension SyncDeviceOptions {
    /// `--name`, else the host name.
    var deviceName: String { name ?? ProcessInfo.processInfo.hostName }
}

/// A sync subcommand's work (its options are `KeyhavenCLI`'s).
protocol SyncWork {
    func work() async throws
}

/// The engine on this home's default keychain, opened in this process; with `showsProgress`, on a
/// terminal, it shows how far a long exchange is (entries and items, done and left) on one line.
func engine(showsProgress: Bool = false) throws -> SyncEngine {
    do {
        let home = try KeychainHome.current()
        try home.prepare()
        let progress: (@Sendable (SyncProgress) -> Void)? = showsProgress && isatty(STDOUT_FILENO) == 1 ? ProgressLine.show : nil
        let database = try KeychainRegistry.shared.defaultKeychain()
        try unlockOnTerminal(database)
        return SyncEngine(database: database, home: home, progress: progress)
    } catch {
        printError("keyhaven: sync: the default keychain could not be opened: \(error.message)")
        throw ExitCode(Int32(UInt8(truncatingIfNeeded: error.code.appleStatus)))
    }
}

/// A default keychain with a password opens locked in this process (the lock model's "reboot"):
/// on a terminal, asks for its password (without echo) and unlocks it here, as security(1) asks
/// when a keychain it needs is locked. Without a terminal it stays locked, and what needs it says
/// so (the agent's background sync, unlocked through `keyhaven unlock-keychain`, needs no prompt).
func unlockOnTerminal(_ database: KeychainDatabase) throws(StoreError) {
    let status = database.status()
    guard status.hasPassword, !status.isUnlocked else { return }
    let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard terminal >= 0 else { return }
    close(terminal)
    var password = try PasswordInput.read(prompt: "password to unlock the default keychain: ")
    defer { zeroize(&password) }
    try database.unlock(password: password)
}

/// The progress of a long exchange, on one terminal line rewritten in place; only past 200
/// entries or items (a short exchange shows nothing), and cleared before the command's own output.
enum ProgressLine {
    static let shown = Mutex(false)

    @Sendable static func show(_ progress: SyncProgress) {
        guard progress.total >= 200 else { return }
        shown.withLock { shown in
            shown = true
            writeStandardOutput(Array("\r\u{1B}[K\(progress.done) of \(progress.total) \(progress.phase.rawValue), \(progress.total - progress.done) left".utf8))
        }
    }

    static func clear() {
        shown.withLock { shown in
            if shown { writeStandardOutput(Array("\r\u{1B}[K".utf8)) }
            shown = false
        }
    }
}

/// Runs `body`, turning an engine error into a message on standard error and the exit status
/// (the OSStatus's low byte, as keyhaven's other subcommands).
func reporting<T>(_ command: String, _ body: () async throws(SyncEngineError) -> T) async throws -> T {
    do {
        defer { ProgressLine.clear() }
        return try await body()
    } catch {
        printError("keyhaven: sync \(command): \(error.message)")
        throw ExitCode(Int32(UInt8(truncatingIfNeeded: error.exitStatus)))
    }
}

/// Prints a value as JSON (sorted keys, one line).
func printJSON(_ value: Any) {
    let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    printLine(String(decoding: data, as: UTF8.self))
}

extension SyncCreate: SyncWork {
    func work() async throws {
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
    func work() async throws {
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
    func work() async throws {
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

extension SyncNow: SyncWork {
    func work() async throws {
        let engine = try engine(showsProgress: true)
        let report = try await reporting("now") { () throws(SyncEngineError) in try await engine.syncNow() }
        printLine("In step at \(report.head.fingerprint): pulled \(report.pulled), pushed \(report.pushed) entries; "
                  + "\(report.added) added, \(report.changed) changed, \(report.deleted) deleted here"
                  + (report.waiting > 0 ? "; \(report.waiting) wait for an unlock" : "") + ".")
    }
}

extension SyncStatus: SyncWork {
    func work() async throws {
        let engine = try engine()
        let staleAfter = UInt64(staleAfter)
        guard let status = try await reporting("status", { () throws(SyncEngineError) in try engine.status(staleAfter: staleAfter) }) else {
            if json { printJSON(["syncing": false]) } else { printLine("Not syncing: `keyhaven sync create --server URL` or `keyhaven sync join` to start.") }
            return
        }
        if json {
            let refusal: Any = status.refusal.map { ["name": $0.name, "message": $0.message] } ?? NSNull()
            printJSON(["syncing": !status.isRemoved, "removed": status.isRemoved, "server": status.server, "account": status.account.hex,
                       "device": status.device.hex, "name": status.name, "head": status.head.fingerprint,
                       "sequence": status.head.sequence, "items": status.items, "epoch": status.epoch, "refusal": refusal,
                       "staleDevices": status.staleDevices.map { ["id": $0.id.hex, "name": $0.name, "lastHeartbeat": $0.lastHeartbeat ?? 0] }])
            return
        }
        if status.isRemoved {
            printLine("This device was removed from its sync account: it syncs no more; its items stay here.")
        } else {
            printLine("Syncing with \(status.server).")
        }
        printLine("Account: \(status.account.hex)")
        printLine("This device: \(status.device.hex) (\(status.name))")
        printLine("Verified head: \(status.head.fingerprint) (key epoch \(status.epoch))")
        printLine("Synced items: \(status.items)")
        if let refusal = status.refusal {
            printLine("The last sync was refused (\(refusal.name)): \(refusal.message)")
        }
        for device in status.staleDevices {
            let since = Date(timeIntervalSince1970: Double(device.lastHeartbeat ?? 0) / 1000).formatted(.iso8601)
            printLine("Warning (stale device): \(device.name) (\(device.id.hex)) has not been heard from since \(since): "
                      + "it is offline, or the server withholds its entries.")
        }
    }
}

extension SyncVerify: SyncWork {
    func work() async throws {
        let engine = try engine(showsProgress: !json)
        if !offline { _ = try await reporting("verify") { () throws(SyncEngineError) in try await engine.syncNow() } }
        let position = at
        let head = try await reporting("verify") { () throws(SyncEngineError) in try engine.verifiedHead(at: position) }
        if json {
            printJSON(["sequence": head.sequence, "fingerprint": head.fingerprint])
        } else {
            printLine("Verified head: \(head.fingerprint)")
        }
    }
}

extension SyncRotateRecoveryKey: SyncWork {
    func work() async throws {
        let engine = try engine()
        let key = try await reporting("rotate-recovery-key") { () throws(SyncEngineError) in try await engine.rotateRecoveryKey() }
        printLine("Recovery key: \(key.text)")
        printLine("The old recovery key opens nothing written from now on. Keep the new one offline; it is shown once.")
    }
}

extension SyncDevices: SyncWork {
    func work() async throws {
        let engine = try engine()
        let devices = try await reporting("devices") { () throws(SyncEngineError) in try engine.devices() }
        if json {
            printJSON(devices.map { device -> [String: Any] in
                ["id": device.id.hex, "name": device.name, "addedBy": device.addedBy.hex, "addedAt": device.addedAt,
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
            printLine("\(device.id.hex)  \(device.name)  added by \(device.addedBy.hex) at \(device.addedAt), last seen at \(device.lastSeen)"
                      + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))"))
        }
    }
}

extension SyncRemoveDevice: SyncWork {
    func work() async throws {
        guard let device = DeviceID(hex: id) else {
            printError("keyhaven: sync remove-device: a device id is 32 hexadecimal digits")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: Int32(-50))))
        }
        let engine = try engine()
        let name = try await reporting("remove-device") { () throws(SyncEngineError) in try await engine.removeDevice(device) }
        printLine("Removed \(name) (\(device.hex)): it can no longer pull or push. What it already had stays on it: change those passwords.")
    }
}

extension SyncRecover: SyncWork {
    func work() async throws {
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
    func work() async throws {
        let engine = try engine()
        try await reporting("leave") { () throws(SyncEngineError) in try engine.leave() }
        printLine("This machine no longer syncs; its items stay in the keychain.")
    }
}
