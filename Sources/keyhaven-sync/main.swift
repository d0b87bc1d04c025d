// keyhaven-sync: the work of `keyhaven sync ...` (create, now, status, devices, leave). keyhaven
// runs it in its own place for them, so that its other subcommands start without the HTTP client
// and the sync engine. Run directly, it takes keyhaven's command lines.
import KeyhavenCLI
import KeyhavenSyncCommands

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    var command = try KeyhavenCommand.parseAsRoot(arguments)
    if let work = command as? any SyncWork {
        try await work.work()
    } else {
        try command.run()
    }
} catch {
    KeyhavenCommand.exit(withError: error)
}
