import ArgumentParser
import KeychainStore

/// `keyhaven`: macOS security(1)'s keychain subcommands for Linux, over the agent.
package struct KeyhavenCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "keyhaven",
        abstract: "Manage keychains and their passwords, as macOS's security command does.",
        discussion: """
            Keychains live in $KEYHAVEN_HOME (else $XDG_DATA_HOME/keyhaven, else ~/.local/share/keyhaven). \
            A keychain argument is a path (with a slash) or a name in that folder. The agent, keyhavend, \
            is started on first need and keeps unlocked keychains unlocked between commands. \
            The exit status is the low byte of the OSStatus (44: not found, 45: duplicate, \
            36: locked, 51: wrong password).
            """,
        subcommands: [
            CreateKeychain.self, DeleteKeychain.self, ListKeychains.self, DefaultKeychain.self,
            UnlockKeychain.self, LockKeychain.self, ShowKeychainInfo.self, SetKeychainSettings.self,
            SetKeychainPassword.self, AddGenericPassword.self, FindGenericPassword.self, DeleteGenericPassword.self,
            AddInternetPassword.self, FindInternetPassword.self, DeleteInternetPassword.self, DumpKeychain.self,
            AgentCommand.self,
        ]
    )

    package init() {}

    /// Runs the command line: password options given without a value (`-w` or `-p` as the last
    /// argument) become a prompt, as in security(1).
    package static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var arguments = arguments
        if let last = arguments.last, ["-w", "-p", "-o"].contains(last) { arguments.append(PasswordInput.prompt) }
        if let index = arguments.firstIndex(of: "-p"), index + 1 < arguments.count, arguments[index + 1].hasPrefix("-"),
           arguments[index + 1] != "-", ["unlock-keychain", "create-keychain"].contains(arguments.first ?? "") {
            arguments.insert(PasswordInput.prompt, at: index + 1)
        }
        Self.main(arguments)
    }
}

/// Runs a subcommand's work; an engine error is printed as security(1) prints it and becomes
/// the exit status (the OSStatus's low byte).
func perform(_ operation: String, _ body: () throws(StoreError) -> Void) throws {
    do {
        try body()
    } catch {
        let status = error.code.appleStatus
        let message = appleErrorMessages[status] ?? error.message
        let detail = error.message != message && error.code != .itemNotFound ? " (\(error.message))" : ""
        printError("keyhaven: \(operation): \(message)\(detail)")
        throw ExitCode(Int32(UInt8(truncatingIfNeeded: status)))
    }
}
