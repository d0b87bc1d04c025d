// keyhaven: macOS security(1)'s keychain subcommands for Linux.
import KeyhavenCLI

KeyhavenCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
