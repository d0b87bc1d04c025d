import ArgumentParser
import KeychainModel

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
            36: locked, 51: wrong password). \
            Passwords: give -p or -w without a value (-w last, or -p followed by another option) to be \
            asked for it without echo, or the value - to read one line from standard input. A value on \
            the command line is visible to every user of the machine (ps, /proc/PID/cmdline) and stays \
            in shell history. \
            The certificate and key subcommands (import, export, find-certificate, find-identity, \
            delete-certificate, delete-identity, create-keypair) are done by keyhaven-pki, and the sync \
            subcommands by keyhaven-sync; both must be installed beside keyhaven.
            """,
        version: KeyhavenRelease.version,
        subcommands: [
            CreateKeychain.self, DeleteKeychain.self, ListKeychains.self, DefaultKeychain.self,
            UnlockKeychain.self, LockKeychain.self, ShowKeychainInfo.self, SetKeychainSettings.self,
            SetKeychainPassword.self, BackupKeychain.self,
            AddPassword<GenericPasswordOptions>.self, FindPassword<GenericPasswordOptions>.self,
            DeletePassword<GenericPasswordOptions>.self, AddPassword<InternetPasswordOptions>.self,
            FindPassword<InternetPasswordOptions>.self, DeletePassword<InternetPasswordOptions>.self, DumpKeychain.self,
            ImportItems.self, ImportSecrets.self, ExportItems.self, FindCertificate.self, FindIdentity.self, DeleteCertificate.self, DeleteIdentity.self,
            CreateKeyPair.self,
            AccessCommand.self, AgentCommand.self, LoginKeychainCommand.self, SSHCommand.self, SyncCommand.self, TPMCommand.self,
        ]
    )

    package init() {}

    /// Runs the command line: a password option given without a value (`-w` last, `-p` followed
    /// by another option) becomes a prompt, as in security(1).
    package static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        HelperDispatch.originalArguments = arguments
        var arguments = arguments
        // Which options take a password in which subcommand (elsewhere -w is a flag).
        let passwordOptions: [String: Set<String>] = [
            "add-generic-password": ["-w"], "add-internet-password": ["-w"], "create-keychain": ["-p"],
            "unlock-keychain": ["-p"], "access": ["-p"], "set-keychain-password": ["-o", "-p"], "import": ["-P"], "export": ["-P"],
        ]
        let options = passwordOptions[arguments.first ?? ""] ?? []
        var index = 1
        while index < arguments.count {
            let next = index + 1 < arguments.count ? arguments[index + 1] : nil
            if options.contains(arguments[index]), next == nil || (next!.hasPrefix("-") && next != "-") {
                arguments.insert(PasswordInput.prompt, at: index + 1)
            }
            index += 1
        }
        QuickFind(arguments)?.run()
        runSubcommandDirectly(arguments)
        Self.main(arguments)
    }

    /// Parses and runs the named subcommand on its own, when the arguments are plainly for it:
    /// ArgumentParser then builds only that subcommand's tree, not the whole command's (most of
    /// a short command's time). Returns without having run anything if the arguments ask for
    /// help or completion or do not parse; the full parse then gives the usual answer.
    private static func runSubcommandDirectly(_ arguments: [String]) {
        guard let name = arguments.first,
              let subcommand = configuration.subcommands.first(where: { $0._commandName == name }) else { return }
        let rest = Array(arguments.dropFirst())
        guard !rest.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "help" || $0.hasPrefix("--generate-completion")
                                      || $0.hasPrefix("--experimental") || $0 == "--version" }),
              var command = try? subcommand.parseAsRoot(rest) else { return }
        do {
            try command.run()
        } catch {
            exit(withError: error)
        }
        exit()
    }
}

extension CommandConfiguration {
    /// A subcommand's configuration, naming `keyhaven` as its parent: when the subcommand is
    /// parsed on its own (``KeyhavenCommand/main(arguments:)``), its usage and errors still say
    /// `keyhaven <subcommand>`, and ArgumentParser skips the completion-script check that only
    /// the whole command answers.
    var underKeyhaven: CommandConfiguration {
        var configuration = self
        configuration._superCommandName = "keyhaven"
        return configuration
    }
}

/// Runs a subcommand's work; an engine error is printed as security(1) prints it and becomes
/// the exit status (the OSStatus's low byte). A TPM in lockout is said in its own words and exits
/// 75 (sysexits' EX_TEMPFAIL: the right password works once the lockout passes), not 51, the
/// status of a wrong password.
package func perform(_ operation: String, _ body: () throws(StoreError) -> Void) throws {
    do {
        try body()
    } catch where error.code == .lockedOut {
        printError("keyhaven: \(operation): \(error.message)")
        throw ExitCode(75)
    } catch {
        let status = error.code.appleStatus
        let message = appleErrorMessages[status] ?? error.message
        let detail = error.message != message && error.code != .itemNotFound ? " (\(error.message))" : ""
        printError("keyhaven: \(operation): \(message)\(detail)")
        throw ExitCode(Int32(UInt8(truncatingIfNeeded: status)))
    }
}
