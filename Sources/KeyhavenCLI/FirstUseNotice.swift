#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Says once per keychain home, on standard error, that the default keychain has no password (so
/// anyone who can read the home, a backup of it or its disk reads every item) and how to set one.
/// Shown by the first command that finds the default keychain without a password; never again
/// once `<home>/private/password-notice-shown` exists. pam_keyhaven, where installed, gives the
/// login keychain the login password instead.
enum FirstUseNotice {
    static func showIfNeeded(_ session: Session) {
        let marker = session.home.privateFolder + "/password-notice-shown"
        guard access(marker, F_OK) != 0,
              let path = try? session.preferences().defaultPath(session.home),
              let status = try? session.send(.status(keychain: path)).status(), !status.hasPassword else { return }
        printError("keyhaven: the default keychain (\(path)) has no password: anyone who can read \(session.home.path), "
                   + "a backup of it or its disk can read every item. Set one with: keyhaven set-keychain-password (this is said once).")
        _ = try? FileSecurity.createExclusively(marker, bytes: [])
    }
}
