// keyhaven-sync-server: serves Keyhaven sync accounts from PostgreSQL.
import KeyhavenSyncServer

// Parsed (and validated) first, so bad arguments exit at once with a message; then served.
let command: SyncServerCommand
do {
    command = try SyncServerCommand.parse()
} catch {
    SyncServerCommand.exit(withError: error)
}
do {
    try await command.serve()
} catch {
    SyncServerCommand.exit(withError: error)
}
