import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// `keyhaven login-keychain unlock|change` (a Linux addition): what pam_keyhaven runs as the user
/// at login and when the login password changes. Passwords come on standard input, one a line:
/// `unlock` reads the login password; `change` the old one, then the new one.
///
/// - `unlock`: creates the login keychain (`login.keychain-db` in the keychain home) with the
///   login password if there is none, gives one without a password the login password, else
///   unlocks it (`errSecAuthFailed`, exit 51, when its password is not the login password).
/// - `screen-unlock`: unlocks it with the password when it has one, and does nothing else (no
///   keychain made, no password given): pam_keyhaven's `unlock` in a screen locker runs it during
///   authentication, before it is known whether the password was right.
/// - `change`: changes its password from the old login password to the new one (one without a
///   password gets the new one).
struct LoginKeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login-keychain",
        abstract: "Unlock the login keychain with the login password, or follow its change (for pam_keyhaven; passwords on standard input).")
        .underKeyhaven
    enum Action: String, ExpressibleByArgument { case unlock, screenUnlock = "screen-unlock", change }
    @Argument(help: "unlock (reads the login password), screen-unlock (the same, only unlocking a keychain that has a password) or change (reads the old, then the new).")
    var action: Action

    func run() throws {
        try perform("SecKeychainUnlock") { () throws(StoreError) in
            let session = try Session.open(notice: false)
            let path = session.home.defaultKeychainPath
            // The agent creates the login keychain on first use, without a password.
            let hasPassword = try session.send(.status(keychain: path)).status().hasPassword
            var first = try PasswordInput.resolve("-", prompt: "") ?? []
            defer { zeroize(&first) }
            switch action {
            case .unlock:
                if hasPassword {
                    try session.send(.unlock(keychain: path, password: Data(first)))
                } else {
                    try session.send(.changePassword(keychain: path, old: Data(), new: Data(first)))
                }
            case .screenUnlock:
                if hasPassword { try session.send(.unlock(keychain: path, password: Data(first))) }
            case .change:
                var second = try PasswordInput.resolve("-", prompt: "") ?? []
                defer { zeroize(&second) }
                try session.send(.changePassword(keychain: path, old: hasPassword ? Data(first) : Data(), new: Data(second)))
            }
        }
    }
}
