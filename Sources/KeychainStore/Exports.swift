// The engine's plain types (errors, the item model, the keychain home, the wire format) live in
// KeychainModel, which the command and the agent client link without crypto or SQLite.
@_exported import KeychainModel
