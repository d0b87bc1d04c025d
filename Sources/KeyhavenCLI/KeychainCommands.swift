#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

struct CreateKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create-keychain", abstract: "Create a keychain and leave it unlocked.").underKeyhaven
    @Option(name: .customShort("p"), help: "The new keychain's password (omit the value to be asked; empty: no password).")
    var password: String?
    @Flag(name: .long, help: "Bind the keychain to this machine's TPM: a copy opens nowhere else, and the TPM counts wrong passwords.")
    var tpm = false
    @Argument(help: "The keychain (a path, or a name in the keychain home).") var keychain: String

    func run() throws {
        try perform("SecKeychainCreate") { () throws(StoreError) in
            let session = try Session.open()
            var secret = try PasswordInput.resolveOrAsk(password, prompt: "password for new keychain: ")
            defer { zeroize(&secret) }
            let path = try session.path(keychain)
            try session.send(.create(keychain: path, password: secret.isEmpty ? nil : Data(secret)))
            if tpm {
                do throws(StoreError) {
                    try session.send(.setBound(keychain: path, password: secret.isEmpty ? nil : Data(secret), bound: true))
                    if let status = try? TPMCommand.status(session) { TPMCommand.warnOfEmptyLockout(status) }
                } catch {
                    // Nothing half-made: no TPM, no keychain.
                    _ = try? session.send(.deleteKeychain(keychain: path))
                    throw error
                }
            }
            var preferences = try session.preferences()
            var list = preferences.searchPaths(session.home)
            if !list.contains(path) { list.append(path) }
            preferences.searchList = list
            try preferences.save(session.home)
        }
    }
}

struct DeleteKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-keychain", abstract: "Delete keychains and take them out of the search list.").underKeyhaven
    @Argument(help: "The keychains.") var keychains: [String]

    func run() throws {
        try perform("SecKeychainDelete") { () throws(StoreError) in
            let session = try Session.open()
            var preferences = try session.preferences()
            for name in keychains {
                let path = try session.path(name)
                try session.send(.deleteKeychain(keychain: path))
                preferences.searchList = preferences.searchList?.filter { $0 != path }
                if preferences.defaultKeychain == path { preferences.defaultKeychain = nil }
            }
            try preferences.save(session.home)
        }
    }
}

struct ListKeychains: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list-keychains", abstract: "Show or set the keychain search list.").underKeyhaven
    @Option(name: .customShort("d"), help: "The preference domain (only 'user' exists here).") var domain: String?
    @Flag(name: .customShort("s"), help: "Set the search list to the keychains given.") var set = false
    @Argument(help: "With -s, the keychains of the new list.") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainCopySearchList") { () throws(StoreError) in
            let home = try KeychainHome.current()
            var preferences = try KeychainPreferences.load(home)
            if set {
                preferences.searchList = keychains.map { home.keychainPath(for: $0, relativeTo: FileManager.default.currentDirectoryPath) }
                try preferences.save(home)
            } else {
                // security(1)'s lines; a keychain with a label of its own (a Secret Service
                // collection's) has it after its path.
                for path in preferences.searchPaths(home) {
                    let label = preferences.labels?[path].map { " (\($0))" } ?? ""
                    printLine("    \"\(path)\"" + label)
                }
            }
        }
    }
}

struct DefaultKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "default-keychain", abstract: "Show or set the default keychain.").underKeyhaven
    @Option(name: .customShort("d"), help: "The preference domain (only 'user' exists here).") var domain: String?
    @Option(name: .customShort("s"), help: "Make this keychain the default.") var keychain: String?

    func run() throws {
        try perform("SecKeychainCopyDefault") { () throws(StoreError) in
            let home = try KeychainHome.current()
            var preferences = try KeychainPreferences.load(home)
            if let keychain {
                let path = home.keychainPath(for: keychain, relativeTo: FileManager.default.currentDirectoryPath)
                guard FileSecurity.fileSize(path) != nil else { throw StoreError(.noSuchKeychain, "no keychain at \(path)") }
                preferences.defaultKeychain = path == home.defaultKeychainPath ? nil : path
                try preferences.save(home)
            } else {
                printLine("    \"\(preferences.defaultPath(home))\"")
            }
        }
    }
}

struct UnlockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlock-keychain", abstract: "Unlock a keychain (default: the default keychain) for every later command.").underKeyhaven
    @Option(name: .customShort("p"), help: "The password (omit the value, or the option, to be asked).") var password: String?
    @Argument(help: "The keychain.") var keychain: String?

    func run() throws {
        try perform("SecKeychainUnlock") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            guard try session.send(.status(keychain: path)).status().hasPassword else { return }
            var secret = try PasswordInput.resolveOrAsk(password, prompt: "password to unlock \(path): ")
            defer { zeroize(&secret) }
            try session.send(.unlock(keychain: path, password: Data(secret)))
        }
    }
}

struct LockKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock-keychain", abstract: "Lock a keychain, or all of them.").underKeyhaven
    @Flag(name: .customShort("a"), help: "Lock every keychain.") var all = false
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainLock") { () throws(StoreError) in
            let session = try Session.open()
            try session.send(.lock(keychain: all ? nil : try session.path(keychain)))
        }
    }
}

struct ShowKeychainInfo: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show-keychain-info", abstract: "Show a keychain's lock settings.").underKeyhaven
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainCopySettings") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            let settings = try session.send(.settings(keychain: path)).settings()
            let status = try session.send(.status(keychain: path)).status()
            var line = "Keychain \"\(path)\""
            if settings.lockOnSleep { line += " lock-on-sleep" }
            line += settings.useLockInterval ? " timeout=\(settings.lockInterval)s" : " no-timeout"
            if status.isBound { line += " tpm" }
            printLine(line + (status.isUnlocked ? " unlocked" : " locked"))
        }
    }
}

struct SetKeychainSettings: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set-keychain-settings", abstract: "Set a keychain's lock settings.").underKeyhaven
    @Flag(name: .customShort("l"), help: "Lock when the screen locks or the system sleeps (keyhavend follows logind).") var lockOnSleep = false
    @Flag(name: .customShort("u"), help: "Lock after the timeout.") var lockAfterTimeout = false
    @Option(name: .customShort("t"), help: "The timeout in seconds (implies -u).") var timeout: UInt32?
    @Flag(name: .long, help: "Bind the keychain to this machine's TPM (docs/tpm.md).") var tpm = false
    @Flag(name: .customLong("no-tpm"), help: "Free the keychain from the TPM (needs its password).") var noTPM = false
    @Option(name: .customShort("p"), help: "The keychain's password, for --tpm and --no-tpm (omit to be asked when it has one).")
    var password: String?
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func validate() throws {
        if tpm && noTPM { throw ValidationError("--tpm and --no-tpm exclude each other") }
    }

    func run() throws {
        try perform("SecKeychainSetSettings") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            if tpm || noTPM {
                let hasPassword = try session.send(.status(keychain: path)).status().hasPassword
                var secret = hasPassword ? try PasswordInput.resolveOrAsk(password, prompt: "password for \(path): ",
                                                                          needed: tpm ? "--tpm" : "--no-tpm") : []
                defer { zeroize(&secret) }
                try session.send(.setBound(keychain: path, password: hasPassword ? Data(secret) : nil, bound: tpm))
                if tpm, let status = try? TPMCommand.status(session) { TPMCommand.warnOfEmptyLockout(status) }
                // The binding alone: the lock settings change only when asked for too.
                guard lockOnSleep || lockAfterTimeout || timeout != nil else { return }
            }
            let settings = LockSettings(lockOnSleep: lockOnSleep, useLockInterval: lockAfterTimeout || timeout != nil,
                                        lockInterval: timeout ?? 300)
            try session.send(.setSettings(keychain: path, settings: settings))
        }
    }
}

struct SetKeychainPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set-keychain-password", abstract: "Set, change or remove (empty new password) a keychain's password.").underKeyhaven
    @Option(name: .customShort("o"), help: "The current password (omit to be asked).") var old: String?
    @Option(name: .customShort("p"), help: "The new password (omit to be asked).") var new: String?
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainChangePassword") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            let hasPassword = try session.send(.status(keychain: path)).status().hasPassword
            var oldSecret = hasPassword ? try PasswordInput.resolveOrAsk(old, prompt: "old password: ") : []
            var newSecret = try PasswordInput.resolveOrAsk(new, prompt: "new password: ")
            defer { zeroize(&oldSecret); zeroize(&newSecret) }
            try session.send(.changePassword(keychain: path, old: Data(oldSecret), new: Data(newSecret)))
        }
    }
}

struct BackupKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup-keychain",
        abstract: "Write a backup of a keychain that opens on another machine with its password (a Linux addition, like SecKeychainBackup).",
        discussion: """
            The keychain must have a password and be unlocked, and the command needs that password \
            (a bound keychain's is checked by the TPM, which counts a wrong one). FILE must not exist; \
            it is created 0600. The backup holds every item but the ThisDeviceOnly ones, and is not \
            bound to the TPM: its password alone opens it. On the other machine, put FILE in the \
            keychain folder (or name it by its path) and unlock it with the password: it is adopted there.
            """).underKeyhaven
    @Option(name: .customShort("p"), help: "The keychain's password (omit to be asked; - reads a line from standard input).")
    var password: String?
    @Argument(help: "The keychain (a name in the keychain folder, or a path).") var keychain: String
    @Argument(help: "The backup file to create.") var file: String

    func run() throws {
        try perform("SecKeychainBackup") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            // The agent writes the file: it is given a path that does not depend on its folder.
            let destination = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            var secret = try PasswordInput.resolveOrAsk(password, prompt: "password for \(path): ", needed: "backup-keychain")
            defer { zeroize(&secret) }
            try session.send(.backup(keychain: path, destination: destination, password: Data(secret)))
        }
    }
}

struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "agent", abstract: "Start, stop or ask about keyhavend.").underKeyhaven
    enum Action: String, ExpressibleByArgument { case start, stop, status }
    @Argument(help: "start, stop or status.") var action: Action

    func run() throws {
        try perform("agent") { () throws(StoreError) in
            let home = try KeychainHome.current()
            switch action {
            case .start:
                let client = try AgentLauncher.connect(home: home)
                printLine("keyhavend is running (pid \(try client.send(.hello).hello().pid)) at \(AgentSocket.current().path)")
            case .stop:
                guard let client = try? AgentLauncher.connect(home: home, start: false) else {
                    printLine("keyhavend is not running")
                    return
                }
                let pid = client.agentProcessID
                do throws(StoreError) {
                    _ = try client.send(.shutdown)
                } catch where error.code == .wrongVersion || error.code == .notAvailable || error.code == .authFailed {
                    // An agent of another protocol version answers with an error or hangs up, and
                    // one beside another keyhaven takes its stop request from its own keyhaven
                    // only; every agent stops on the user's SIGTERM.
                    guard let pid, kill(pid, SIGTERM) == 0 else { throw error }
                }
                // Stopped means gone: an `agent start` right after must not find the old agent
                // still on its socket, refuse to start beside it, and then see it exit.
                if let pid, !AgentLauncher.waitForExit(pid, within: .seconds(10)) {
                    throw StoreError(.notAvailable, "keyhavend (pid \(pid)) was asked to stop and is still running")
                }
                printLine("keyhavend stopped")
            case .status:
                guard let client = try? AgentLauncher.connect(home: home, start: false) else {
                    printLine("keyhavend is not running")
                    throw StoreError(.notAvailable, "no agent")
                }
                let hello = try client.send(.hello).hello()
                printLine("keyhavend is running (pid \(hello.pid)) for \(hello.home) at \(AgentSocket.current().path)")
            }
        }
    }
}
