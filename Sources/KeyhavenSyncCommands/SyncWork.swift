import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore
import KeyhavenAgentClient
import KeyhavenCLI
import KeyhavenSyncCore
import KeyhavenSyncDevice
import Synchronization

extension SyncDeviceOptions {
    /// `--name`, else the host name.
    var deviceName: String { name ?? ProcessInfo.processInfo.hostName }
}

/// A sync subcommand's work (its options are `KeyhavenCLI`'s): what `keyhaven-sync` runs for
/// `keyhaven sync ...`.
package protocol SyncWork {
    func work() async throws
}

/// The agent that serves this home, when one runs (and `KEYHAVEN_AGENT` is not `off`): `sync
/// now` and `sync status` go through it, on the keychain it holds unlocked, so the password it
/// was given is not asked again. Without one they open the keychain in this process.
func runningAgent() throws -> SyncAgent? {
    do throws(StoreError) {
        let home = try KeychainHome.current()
        return try AgentDiscovery.socket(for: home).map { SyncAgent(socket: $0, home: home.path) }
    } catch {
        printError("keyhaven: sync: the agent could not be reached: \(error.message)")
        throw ExitCode(Int32(UInt8(truncatingIfNeeded: error.code.appleStatus)))
    }
}

/// The agent's socket for this home, and how a subcommand asks it.
struct SyncAgent {
    let socket: AgentSocket
    let home: String

    func send(_ request: AgentRequest) throws(StoreError) -> AgentAnswer {
        try AgentConnectionPool.shared.send(request, socket: socket, home: home)
    }

    /// Runs `body`, turning the agent's failure into a message and the exit status, as
    /// ``reporting(_:_:)`` does for a round in this process: the agent answers with the keychain
    /// error whose Apple status is the engine error's.
    func ask<T>(_ command: String, _ body: (SyncAgent) throws(StoreError) -> T) throws -> T {
        do throws(StoreError) {
            return try body(self)
        } catch {
            printError("keyhaven: sync \(command): \(error.message)")
            throw ExitCode(Int32(UInt8(truncatingIfNeeded: error.code.appleStatus)))
        }
    }
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
